package migrate_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// failOnce fails the first creation of one table, as a copy killed at that point would stop.
type failOnce struct {
	backends.Backend
	table  string
	failed atomic.Bool
}

var errInjected = errors.New("injected failure")

func (f *failOnce) CreateTable(ctx context.Context, table string, opts backends.TableOptions) error {
	if table == f.table && f.failed.CompareAndSwap(false, true) {
		return errInjected
	}
	return f.Backend.CreateTable(ctx, table, opts)
}

// TestCopyStopsBeforeTarget: an indexed copy stopped at its first steps (its checkpoint, or the
// target, not made) leaves no fenced target without a checkpoint: the store holds nothing, or a
// checkpoint --resume recognises; either way the next copy finishes.
func TestCopyStopsBeforeTarget(t *testing.T) {
	for _, tc := range []struct {
		name, fail string
	}{
		{"the checkpoint not made", migrate.CheckpointTable("orders")},
		{"the target not made", "orders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t, time.Minute)
			from := open(t, "memory")
			load(t, ctx, from, true)
			to := client.New(&failOnce{Backend: memory.New(), table: tc.fail}, client.WithRouteRefresh(20*time.Millisecond), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
			t.Cleanup(func() { _ = to.Close() })
			if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{}); !errors.Is(err, errInjected) {
				t.Fatalf("first copy: %v, want the injected failure", err)
			}
			if names, err := to.Tables(ctx); err != nil || len(names) != 0 {
				t.Fatalf("after the failed copy the target store holds %v (%v), want nothing", names, err)
			}
			if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{}); err != nil {
				t.Fatalf("the copy again: %v", err)
			}
			equal(t, ctx, from, to, "orders", false)
		})
	}
}
