//go:build integration

package integration

import (
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/internal/hbasetest"
)

// gohbaseLeftovers are the goroutines the pinned gohbase leaves for the life of the process, and
// nothing else:
//   - its AdminClient cannot be closed (Close panics on a nil channel), so the region client of its
//     master connection keeps its reader and batching goroutines;
//   - a scanner closed in the middle of a region, or at a region's end, sends its close-scanner RPC
//     from a goroutine of its own, which waits forever if its reply raced the client's Close:
//     hbasetest.FindLeaks forgives that one, and only that one.
//
// The data client's region clients run the same functions but end when hbase.Backend.Close closes
// the data client; TestMain runs after every test has closed its backend.
func gohbaseLeftovers() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/tsuna/gohbase/region.(*client).receiveRPCs"),
		goleak.IgnoreAnyFunction("github.com/tsuna/gohbase/region.(*client).processRPCs"),
	}
}

// TestMain needs no server: the store-specific tests find (or skip) their own.
func TestMain(m *testing.M) {
	// gohbase logs every region connection, and every region lookup retried while a region splits,
	// through the default slog logger (the raw clients here give it no other); the tests check the
	// outcomes themselves.
	slog.SetLogLoggerLevel(slog.LevelError + 1)
	os.Exit(hbasetest.RunMain(m, gohbaseLeftovers))
}
