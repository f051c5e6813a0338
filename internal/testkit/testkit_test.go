package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
)

// fakeTB records what a helper reports; Fatal and Fatalf end the goroutine, as testing's do.
type fakeTB struct {
	testing.TB
	fatal, errs []string
	logs        []string
	cleanups    []func()
}

func (f *fakeTB) Helper()                      {}
func (f *fakeTB) Log(args ...any)              { f.logs = append(f.logs, fmt.Sprint(args...)) }
func (f *fakeTB) Cleanup(fn func())            { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Fatal(args ...any)            { f.fatal = append(f.fatal, fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Errorf(s string, args ...any) { f.errs = append(f.errs, fmt.Sprintf(s, args...)) }
func (f *fakeTB) Fatalf(s string, args ...any) {
	f.fatal = append(f.fatal, fmt.Sprintf(s, args...))
	runtime.Goexit()
}

// runFake runs fn with a fakeTB in a goroutine of its own, then the cleanups fn registered, last
// first, and returns the fakeTB.
func runFake(fn func(tb *fakeTB)) *fakeTB {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	for _, c := range slices.Backward(f.cleanups) {
		c()
	}
	return f
}

var errBoom = errors.New("boom")

func TestParse(t *testing.T) {
	if s := testkit.Salter(t, "hash:4"); s.Spec() != "hash:4" {
		t.Errorf("Salter spec %q", s.Spec())
	}
	if s := testkit.Schema(t, "id,n:int64"); s.String() != "id,n:int64" {
		t.Errorf("Schema %q", s.String())
	}
	if f := runFake(func(tb *fakeTB) { testkit.Salter(tb, "hash:x") }); len(f.fatal) != 1 {
		t.Errorf("Salter of a bad spec: fatal %q", f.fatal)
	}
	if f := runFake(func(tb *fakeTB) { testkit.Schema(tb, "id:nope") }); len(f.fatal) != 1 || !strings.Contains(f.fatal[0], `"id:nope"`) {
		t.Errorf("Schema of a bad spec: fatal %q", f.fatal)
	}
}

func TestContextAndLogger(t *testing.T) {
	var ctx context.Context
	f := runFake(func(tb *fakeTB) {
		ctx = testkit.Context(tb, time.Hour)
		if ctx.Err() != nil {
			tb.Fatal("context ended at once")
		}
		log := testkit.Logger(tb, slog.LevelWarn)
		log.Info("hidden")
		log.Warn("shown", "k", 1)
	})
	if len(f.fatal) != 0 {
		t.Fatal(f.fatal)
	}
	if ctx.Err() == nil {
		t.Error("Context still live after the test's cleanups")
	}
	if len(f.logs) != 1 || !strings.Contains(f.logs[0], "msg=shown k=1") || strings.HasSuffix(f.logs[0], "\n") {
		t.Errorf("logged %q, want the warning alone, without its newline", f.logs)
	}
}
