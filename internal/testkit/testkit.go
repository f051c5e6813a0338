// Package testkit holds the helpers that tests of several packages share, so that each exists once.
//
// It imports no brine package but the leaves backends, keys and salting, so that the tests of every
// other package can use it, package-internal ones (package client, package dropin) included; only
// the internal tests of those three packages cannot, as testkit imports what they test.
package testkit

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Salter parses a salting spec, failing the test on a bad one.
func Salter(t testing.TB, spec string) salting.Salter {
	t.Helper()
	s, err := salting.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Schema parses a key schema, failing the test on a bad one.
func Schema(t testing.TB, spec string) *keys.Schema {
	t.Helper()
	s, err := keys.ParseSchema(spec)
	if err != nil {
		t.Fatalf("keys.ParseSchema(%q): %v", spec, err)
	}
	return s
}

// Context is a context that ends after d, or at the test's end when the cleanups come to its own
// (the ones registered after it run first, and can still use it). It does not derive from
// t.Context, which ends before any cleanup runs.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Logger is a text logger that writes the records of level and above to the test's log.
func Logger(t testing.TB, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: level}))
}

// logWriter writes each log line to the test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// DeleteAtEnd deletes table with del (a backend's or a client's DeleteTable) when the test ends, and
// fails the test if that fails with an error other than those of tolerate. The deletion has a minute
// of its own: t.Context has ended by then.
func DeleteAtEnd(t testing.TB, table string, del func(context.Context, string) error, tolerate ...error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := del(ctx, table)
		if err != nil && !slices.ContainsFunc(tolerate, func(e error) bool { return errors.Is(err, e) }) {
			t.Errorf("DeleteTable(%s) at the test's end: %v", table, err)
		}
	})
}
