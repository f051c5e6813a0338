package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// leakOptions are goleak options that build-tagged files add: the HBase tests ignore the goroutine
// of the pinned gohbase's admin client, which cannot be closed (hbase_faults_test.go, in init), and
// the tests that take servers away excuse, by name, the region connections gohbase opens after its
// Close (hbase_restart_test.go, cluster_chaos_test.go).
var leakOptions []goleak.Option

// TestMain checks for leaks after every test ran, with the options as the tests left them (unlike
// goleak.VerifyTestMain, whose options are fixed before the tests start), forgiving only the
// pinned gohbase's close-scanner goroutines whose replies its Close lost (hbasetest.FindLeaks).
func TestMain(m *testing.M) {
	os.Exit(hbasetest.RunMain(m, func() []goleak.Option { return leakOptions }))
}

const table = "t"

// seedCount is how many seeds a fault test runs: def, BRINE_SEEDS when set, a quarter with -short.
func seedCount(t testing.TB, def int) int {
	if s := os.Getenv("BRINE_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("BRINE_SEEDS=%q: want a positive count", s)
		}
		return n
	}
	if testing.Short() {
		return max(1, def/4)
	}
	return def
}

// value is what every test row stores: derived from the key, so any mix-up of rows shows.
func value(k []byte) []byte { return append([]byte("v:"), k...) }

const testTS = 1_700_000_000_000

func putRow(k []byte) client.Mutation {
	return client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: value(k), Timestamp: testTS}}}
}

// scanKeys is the logical key set of the scan tests: 20×20 two-level keys plus keys at the edges of
// the byte order and keys that are prefixes of others.
func scanKeys() [][]byte {
	var ks [][]byte
	for u := range 20 {
		for e := range 20 {
			ks = append(ks, fmt.Appendf(nil, "u%02d/e%02d", u, e))
		}
	}
	ks = append(ks, []byte{0}, []byte{0xff, 0xff}, []byte("u05"), []byte("u05/"), []byte("u05/e07\x00"), []byte("u19/e19\xff"))
	slices.SortFunc(ks, bytes.Compare)
	return ks
}

// newMemTable creates table "t" with salter spec on a fresh memory backend and writes rows for ks
// through an unfaulted client. The backend is closed when the test ends.
func newMemTable(t testing.TB, spec string, ks [][]byte, opts ...memory.Option) *memory.Backend {
	t.Helper()
	ctx := context.Background()
	mem := memory.New(opts...)
	t.Cleanup(func() { mem.Close() })
	c := client.New(mem)
	tbl, err := c.CreateTable(ctx, table, client.TableConfig{Salter: testkit.Salter(t, spec)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) == 0 {
		return mem
	}
	muts := make([]client.Mutation, len(ks))
	for i, k := range ks {
		muts[i] = putRow(k)
	}
	rowErrs, err := tbl.Apply(ctx, muts)
	if err != nil || rowErrs != nil {
		t.Fatalf("loading %d rows: %v %v", len(ks), err, firstErr(rowErrs))
	}
	return mem
}

// openOn opens table "t" through a client on b. The client is not closed: b belongs to the caller.
func openOn(t testing.TB, b backends.Backend, opts ...client.Option) *client.Table {
	t.Helper()
	tbl, err := client.New(b, opts...).OpenTable(context.Background(), table, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// expected is the reference answer of a scan over the sorted logical keys ks, resumed past after
// when it is not nil.
func expected(ks [][]byte, r client.Range, reverse bool, limit int, after []byte) [][]byte {
	if after != nil {
		ks = slices.DeleteFunc(slices.Clone(ks), func(k []byte) bool {
			c := bytes.Compare(k, after)
			return !reverse && c <= 0 || reverse && c >= 0
		})
	}
	return backendtest.ExpectKeys(ks, r, reverse, limit)
}

// checkScan is the scan contract under faults: the rows are a prefix of want, in order, each with its
// own value; and they are all of want unless the scan ended with an error.
func checkScan(want [][]byte, got []client.Row, err error) error {
	if len(got) > len(want) {
		return fmt.Errorf("%d rows, the reference has %d", len(got), len(want))
	}
	for i, row := range got {
		if !bytes.Equal(row.Key, want[i]) {
			return fmt.Errorf("row %d is %q, the reference has %q", i, row.Key, want[i])
		}
		if len(row.Cells) != 1 || !bytes.Equal(row.Cells[0].Value, value(row.Key)) {
			return fmt.Errorf("row %q has cells %+v", row.Key, row.Cells)
		}
	}
	if err == nil && len(got) != len(want) {
		return fmt.Errorf("SILENT SHORT RESULT: %d of %d rows and no error", len(got), len(want))
	}
	return nil
}

// injectedErr reports whether err is one the test's faults explain.
func injectedErr(err error) bool {
	return errors.Is(err, faulty.ErrInjected) || errors.Is(err, context.DeadlineExceeded)
}
