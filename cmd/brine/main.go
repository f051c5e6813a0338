// Command brine creates, fills, reads and inspects salted tables on the embedded store, HBase or
// Tablestore. `brine demo` shows the whole idea on the embedded store with no setup.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand: its flags are parsed from args, output goes to stdout.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// exitInterrupted is the shell's code for a command ended by SIGINT (128 + 2).
const exitInterrupted = 130

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

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: brine COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nstores (--store): local://PATH (default %s), memory://, hbase://ZKHOST:2181[,ZKHOST:2181...],\n", defaultStore)
	fmt.Fprintln(w, "  tablestore://INSTANCE@ENDPOINT-HOST (credentials from TABLESTORE_ACCESS_KEY_ID/_SECRET)")
	fmt.Fprintln(w, "run 'brine COMMAND -h' for a command's flags; flags may come before or after the command and its arguments, -v is verbose")
}
