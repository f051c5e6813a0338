// Package periodtest is the one statement of how a period table (periods.Table) behaves,
// run by every store: the embedded ones in client's tests, HBase and the local Tablestore server in
// the integration tests.
package periodtest

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
)

// Store opens a fresh backend for one test; prefix keeps table names apart on a shared server.
type Store struct {
	Open   func(t *testing.T) backends.Backend
	Prefix string
	// Layouts names the key layouts to run (nil: all); a store whose table creation costs seconds
	// runs "host-first" only, the layout whose periods interleave in key order.
	Layouts []string
	// NoMetadata leaves out the metadata test, for HBase, whose time budget goes to the tests of
	// what differs per store (routing, scans, a drop during a scan); the HBase CLI test declares,
	// reopens, lists and expires a period table there.
	NoMetadata bool
}

// layouts returns the key layouts the store runs.
func (s Store) layouts() []layout {
	if s.Layouts == nil {
		return allLayouts
	}
	var out []layout
	for _, lt := range allLayouts {
		if slices.Contains(s.Layouts, lt.name) {
			out = append(out, lt)
		}
	}
	return out
}

// Run runs every period-table test against the store.
func Run(t *testing.T, s Store) {
	t.Run("Routing", func(t *testing.T) { testRouting(t, s) })
	t.Run("Scans", func(t *testing.T) { testScans(t, s) })
	t.Run("ExpireDuringScan", func(t *testing.T) { testExpireDuringScan(t, s) })
	if !s.NoMetadata {
		t.Run("Metadata", func(t *testing.T) { testMetadata(t, s) })
	}
}

// Counting wraps a backend and records which tables each scan touched.
type Counting struct {
	backends.Backend
	mu     sync.Mutex
	tables map[string]int
}

// NewCounting wraps b.
func NewCounting(b backends.Backend) *Counting {
	return &Counting{Backend: b, tables: map[string]int{}}
}

// Scan counts the call and passes it on.
func (c *Counting) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	c.mu.Lock()
	c.tables[table]++
	c.mu.Unlock()
	return c.Backend.Scan(ctx, table, r, opts)
}

// Reset returns how many distinct tables were scanned since the last call, and starts counting anew.
func (c *Counting) Reset() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.tables)
	clear(c.tables)
	return n
}

// layout is a key layout with the time in one field.
type layout struct {
	name   string
	schema string
	field  int
	key    func(s *keys.Schema, host string, ts time.Time) []byte
}

func mustEncode(s *keys.Schema, vals ...any) []byte {
	k, err := s.Encode(vals...)
	if err != nil {
		panic(err)
	}
	return k
}

var allLayouts = []layout{
	{"time-first", "ts:int64,host", 0, func(s *keys.Schema, h string, ts time.Time) []byte {
		return mustEncode(s, ts.UnixMilli(), h)
	}},
	{"time-first-desc", "ts:int64:desc,host", 0, func(s *keys.Schema, h string, ts time.Time) []byte {
		return mustEncode(s, ts.UnixMilli(), h)
	}},
	{"host-first", "host,ts:int64", 1, func(s *keys.Schema, h string, ts time.Time) []byte {
		return mustEncode(s, h, ts.UnixMilli())
	}},
}

// ctxFor is the context of one test's calls to the store.
func ctxFor(t *testing.T) context.Context { return testkit.Context(t, 2*time.Minute) }

// newTable creates a monthly period table named prefix+name, dropped at the end.
func newTable(t *testing.T, c *client.Client, name string, field int) *periods.Table {
	t.Helper()
	ctx := ctxFor(t)
	per, _ := periods.ParseInterval("month")
	p, err := periods.Create(ctx, c, name, periods.Config{
		Interval: per, TimeField: field, Table: client.TableConfig{Salter: testkit.Salter(t, "hash:4")},
		Retention: periods.Retention{Keep: 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		q, err := periods.Open(context.Background(), c, name, nil)
		if err == nil {
			err = q.Drop(context.Background())
		}
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	return p
}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func cells(v string) []client.Cell {
	return []client.Cell{{Family: "d", Qualifier: "q", Value: []byte(v)}} // the server stamps it: Tablestore refuses old stamps
}

// collect runs a scan to its end, or its first error, and returns the keys of its rows.
func collect(seq iter.Seq2[client.Row, error]) ([]string, error) {
	rows, err := testkit.CollectErr(seq)
	return testkit.KeyStrings(rows), err
}

func name(s Store, n string) string { return fmt.Sprintf("%s%s", s.Prefix, n) }
