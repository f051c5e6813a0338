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
	"syscall"
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
	getenv func(string) string
}

func commands() []command {
	return []command{
		{"demo", "salt a table of 1M monotonic time-series keys on the embedded store and scan it back", runDemo},
		{"create", "create a salted table", runCreate},
		{"put", "write one row: put KEY FAMILY:QUALIFIER=VALUE...", runPut},
		{"get", "read one row: get KEY", runGet},
		{"scan", "scan a logical key range in order", runScan},
		{"analyze", "show how keys (one per line, from a file or stdin) spread over buckets", runAnalyze},
		{"import", "bulk-import CSV, TSV or JSON Lines into a salted table", runImport},
		{"bench", "benchmark brine against the raw driver on one store (Markdown + JSON report)", runBench},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv,
		logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if err := run(ctx, env, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "brine:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stderr)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	usage(env.stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: brine COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nstores (--store): local://PATH (default local://brine-data), memory://, hbase://ZKHOST[:2181][,ZKHOST...],")
	fmt.Fprintln(w, "  tablestore://INSTANCE@ENDPOINT-HOST (credentials from TABLESTORE_ACCESS_KEY_ID/_SECRET)")
	fmt.Fprintln(w, "run 'brine COMMAND -h' for a command's flags")
}

// newFlagSet returns a flag set that reports errors instead of exiting, so run stays testable.
func newFlagSet(env *cliEnv, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("brine "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return fs
}
