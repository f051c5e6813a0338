package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/brine-kv/brine/migrate"
)

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
