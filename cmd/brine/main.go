// Command brine creates, fills, reads and inspects salted tables on the embedded store, HBase or
// Tablestore. `brine demo` shows the whole idea on the embedded store with no setup.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/brine-kv/brine/migrate"
)

// command is one subcommand: its flags are parsed from args, output goes to stdout.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what a command may touch: no package-level state, so tests can run commands in parallel.
type cliEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	logger *slog.Logger
	// gohbaseLogger receives gohbase's own lines; nil (tests) means none.
	gohbaseLogger *slog.Logger
	getenv        func(string) string
	// verbose, when set, turns the drivers' logs on (the CLI is quiet by default); tests leave it nil.
	verbose func()
	// watchInput, when set, wraps an import's input as it is opened: tests use it to interrupt an
	// import at a known point of its input.
	watchInput func(io.Reader) io.Reader
	// watchCopy, when set, hears a copy's progress after each chunk: tests use it to interrupt one.
	watchCopy func(migrate.Progress)
	// clientOptions are added to every client a command builds (the metrics of import and bench).
	clientOptions clientOptionList
}

// gohbaseLog is the logger gohbase's clients get: gohbaseLogger, or one that drops every line.
func (env *cliEnv) gohbaseLog() *slog.Logger {
	if env.gohbaseLogger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return env.gohbaseLogger
}

// applyVerbose turns verbose output on when -v was given.
func (env *cliEnv) applyVerbose(on bool) {
	if on && env.verbose != nil {
		env.verbose()
	}
}

// exitInterrupted is the shell's code for a command ended by SIGINT (128 + 2).
const exitInterrupted = 130

// exitError carries the exit code a command's failure should end the process with (default 1).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// interruptedError is the error of a command a signal stopped: what was interrupted and how to go
// on, in brine's words; the cause (context.Canceled) is kept for errors.Is, not printed.
type interruptedError struct {
	msg   string
	cause error
}

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return e.cause }

// interrupted is the exit of a command a signal stopped, saying msg.
func interrupted(ctx context.Context, format string, args ...any) error {
	return &exitError{code: exitInterrupted, err: &interruptedError{msg: fmt.Sprintf(format, args...), cause: ctx.Err()}}
}

func commands() []command {
	return []command{
		{"demo", "salt a table of 1M monotonic time-series keys on the embedded store and scan it back", runDemo},
		{"create", "create a salted table", runCreate},
		{"put", "write one row: put KEY FAMILY:QUALIFIER=VALUE...", runPut},
		{"get", "read one row: get KEY", runGet},
		{"delete", "delete one row, or some of its columns: delete KEY [FAMILY[:QUALIFIER]...]", runDelete},
		{"scan", "scan a logical key range in order", runScan},
		{"tables", "list the tables of a store", runTables},
		{"describe", "show a table's salting spec, key schema and regions per bucket: describe TABLE", runDescribe},
		{"drop", "delete a table and its data: drop TABLE", runDrop},
		{"index", "list, verify, rebuild, add or drop a table's indexes: index list|verify|rebuild TABLE [INDEX], index add TABLE --index NAME=SPEC, index drop TABLE NAME", runIndex},
		{"rebucket", "change a live table's bucket count: rebucket TABLE --to hash:32 [--resume]", runRebucket},
		{"analyze", "show how keys (one per line, from a file or stdin) spread over buckets", runAnalyze},
		{"periods", "per-period tables: periods declare|list|create-ahead|tune|expire TABLE", runPeriods},
		{"verify", "compare a table with one on another store (or salting): verify --from STORE --to STORE TABLE [--as NAME]", runVerify},
		{"copy", "copy a table to another store, name or salting, resumable: copy --from STORE --to STORE TABLE [--as NAME] [--salt SPEC] [--since TIME] [--resume]", runCopy},
		{"sync", "make a table on another store equal to this one, deletes included, resumable: sync --from STORE --to STORE TABLE [--as NAME] [--dry-run] [--resume]", runSync},
		{"import", "bulk-import CSV, TSV or JSON Lines into a table (a period table: each row into its period; --bulk: as HBase store files)", runImport},
		{"bench", "benchmark brine against the raw driver on one store (Markdown + JSON report)", runBench},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Quiet by default: gohbase logs every region it learns of, and every lookup retried while a
	// region moves, tens of lines per command that say nothing the command's own result does not;
	// -v shows them, and brine's debug lines.
	level, gohbaseLevel := new(slog.LevelVar), new(slog.LevelVar)
	level.Set(slog.LevelWarn)
	gohbaseLevel.Set(slog.LevelError + 1)
	verbose := false
	env := &cliEnv{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		gohbaseLogger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: gohbaseLevel})).With("component", "gohbase"),
		verbose: func() {
			verbose = true
			level.Set(slog.LevelDebug)
			gohbaseLevel.Set(slog.LevelDebug)
		},
	}
	err := run(ctx, env, os.Args[1:])
	if code := exitCode(ctx, err); code != 0 {
		fmt.Fprintln(os.Stderr, "brine:", errorText(err, verbose))
		os.Exit(code)
	}
}

// exitCode is the process's exit code after run returned err: 0, a command's own code, 130 for any
// command a signal ended, else 1.
func exitCode(ctx context.Context, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		return ee.code
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	return 1
}

// errorText is an error for the terminal: HBase passes Java exceptions through with their stack
// traces, a dozen lines of which say nothing to a CLI user, so only each exception's first line is
// kept unless verbose.
func errorText(err error, verbose bool) string {
	text := err.Error()
	if verbose {
		return text
	}
	var out []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "... ") && strings.HasSuffix(t, " more") {
			continue // a Java stack frame
		}
		out = append(out, line)
	}
	if len(out) < len(strings.Split(text, "\n")) {
		out = append(out, "(stack trace left out; -v shows it)")
	}
	return strings.Join(out, "\n")
}

func run(ctx context.Context, env *cliEnv, args []string) error {
	args, verbose := takeVerbose(args)
	env.applyVerbose(verbose)
	if len(args) == 0 || args[0] == "help" || isHelp(args[0]) {
		usage(env.stderr)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	// Flags written before the command (brine --store URL scan ...) are the command's: every command
	// parses its flags wherever they stand.
	name, rest, found := args[0], args[1:], slices.Contains(names, args[0])
	if strings.HasPrefix(args[0], "-") {
		name, rest, found = subcommand(args, names...)
	}
	if !found {
		usage(env.stderr)
		if slices.ContainsFunc(args, isHelp) {
			return nil
		}
		return fmt.Errorf("unknown command %q", args[0])
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, env, rest)
		}
	}
	panic("unreachable")
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--h" || arg == "-help" || arg == "--help"
}

// takeVerbose takes -v out of args wherever it stands before a "--" (it is global: it may come
// before the command, after it or after its arguments), and reports whether it was there. A flag
// value that is "-v" itself is written --flag=-v.
func takeVerbose(args []string) (rest []string, verbose bool) {
	rest = make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(rest, args[i:]...), verbose
		}
		switch a {
		case "-v", "--v", "-v=true", "--v=true":
			verbose = true
		case "-v=false", "--v=false":
			verbose = false
		default:
			rest = append(rest, a)
		}
	}
	return rest, verbose
}

// subcommand finds the (sub)command among args, the first argument before a "--" that is one of
// names, wherever flags put it; rest is args without it.
func subcommand(args []string, names ...string) (name string, rest []string, found bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if slices.Contains(names, a) {
			return a, slices.Concat(args[:i:i], args[i+1:]), true
		}
	}
	return "", args, false
}

// groupVerb finds the subcommand of a command group (index, periods) among args: -h prints the
// group's usage (flag.ErrHelp), and a missing or unknown subcommand fails with the usage.
func groupVerb(env *cliEnv, group, usage string, args []string, names ...string) (string, []string, error) {
	verb, rest, found := subcommand(args, names...)
	switch {
	case found:
		return verb, rest, nil
	case slices.ContainsFunc(args, isHelp):
		fmt.Fprintln(env.stderr, usage)
		return "", nil, flag.ErrHelp
	case len(args) == 0 || strings.HasPrefix(args[0], "-"):
		return "", nil, errors.New(usage)
	}
	return "", nil, fmt.Errorf("unknown %s subcommand %q\n%s", group, args[0], usage)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: brine COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nstores (--store): local://PATH (default %s), memory://, hbase://ZKHOST:2181[,ZKHOST:2181...],\n", defaultStore)
	fmt.Fprintln(w, "  tablestore://INSTANCE@ENDPOINT-HOST (credentials from TABLESTORE_ACCESS_KEY_ID/_SECRET)")
	fmt.Fprintln(w, "run 'brine COMMAND -h' for a command's flags; flags may come before or after the command and its arguments, -v is verbose")
}

// newFlagSet returns a flag set that reports errors instead of exiting, so run stays testable.
func newFlagSet(env *cliEnv, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("brine "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return fs
}
