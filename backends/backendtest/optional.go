package backendtest

import (
	"bytes"
	"errors"
	"reflect"
	"time"

	"github.com/brine-kv/brine/backends"
)

// The tests of the optional interfaces. They are the only tests the suite skips, and only on a
// driver that does not implement the interface: an interface the suite would fail without is not
// optional, and belongs in backends.Backend.

var regionTests = []test{
	{"SplitKeys", testRegionsSplitKeys},
	{"MissingTable", testRegionsMissing},
}

var tunerTests = []test{
	{"KeepsRows", testTuneKeepsRows},
	{"BadInput", testTuneBadInput},
	{"MissingTable", testTuneMissing},
}

// optional returns the backend as the optional interface I, or skips the test: the one place the
// suite skips anything.
func optional[I any](e *env) I {
	e.Helper()
	i, ok := e.b.(I)
	if !ok {
		e.Skipf("%T does not implement the optional %v", e.b, reflect.TypeFor[I]())
	}
	return i
}

// testRegionsSplitKeys: Regions of a pre-split table starts with the empty key and is sorted; with
// Options.SplitKeysAreRegions it is exactly the split keys.
func testRegionsSplitKeys(e *env) {
	rl := optional[backends.RegionLister](e)
	splits := [][]byte{[]byte("g"), []byte("p"), {0xF0}}
	name := e.createTable(backends.TableOptions{SplitKeys: splits})
	regions, err := rl.Regions(e.ctx, name)
	if err != nil {
		e.Fatalf("Regions: %v", err)
	}
	if len(regions) == 0 || len(regions[0]) != 0 {
		e.Fatalf("Regions = %q, want the empty key first", regions)
	}
	for i := 1; i < len(regions); i++ {
		if bytes.Compare(regions[i-1], regions[i]) >= 0 {
			e.Fatalf("Regions = %q, not sorted", regions)
		}
	}
	if e.s.opts.SplitKeysAreRegions {
		want := append([][]byte{{}}, splits...)
		if len(regions) != len(want) {
			e.Fatalf("Regions = %q, want %q", regions, want)
		}
		for i := range want {
			if !bytes.Equal(regions[i], want[i]) {
				e.Fatalf("Regions = %q, want %q", regions, want)
			}
		}
	}
}

// testRegionsMissing: Regions of a table never created, and of one deleted, fails with
// ErrTableNotFound, as every Backend method does (missing.go).
func testRegionsMissing(e *env) {
	rl := optional[backends.RegionLister](e)
	gone := e.createTable(backends.TableOptions{})
	if err := e.b.DeleteTable(e.ctx, gone); err != nil {
		e.Fatalf("DeleteTable: %v", err)
	}
	for _, name := range []string{e.tableName(), gone} {
		if _, err := rl.Regions(e.ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
			e.Errorf("Regions of %s: %v, want ErrTableNotFound", name, err)
		}
	}
}

// testTuneKeepsRows: Tune changes settings, not rows: a table tuned to keep its data forever (TTL 0)
// and one tuned with Keep still hold what was written. Throughput is left alone, since a live store
// limits how often it may change.
func testTuneKeepsRows(e *env) {
	tn := optional[backends.Tuner](e)
	name := e.createTable(backends.TableOptions{})
	want := []backends.Cell{cell("d", "a", "v", e.ts)}
	e.apply(name, put("k", want...))
	forever := backends.Keep
	forever.TTL = 0
	for _, t := range []backends.Tuning{backends.Keep, forever} {
		if err := tn.Tune(e.ctx, name, t); err != nil {
			e.Fatalf("Tune(%+v): %v", t, err)
		}
		e.wantCells("row after Tune", e.readOne(name, []byte("k")).Cells, want)
	}
}

// testTuneBadInput: a TTL that is not whole seconds fails with ErrInvalidArgument.
func testTuneBadInput(e *env) {
	tn := optional[backends.Tuner](e)
	name := e.createTable(backends.TableOptions{})
	bad := backends.Keep
	bad.TTL = 1500 * time.Millisecond
	if err := tn.Tune(e.ctx, name, bad); !errors.Is(err, backends.ErrInvalidArgument) {
		e.Errorf("Tune with a TTL of 1.5 s: %v, want ErrInvalidArgument", err)
	}
}

// testTuneMissing: a Tune that changes a setting of a table that is not there fails with
// ErrTableNotFound.
func testTuneMissing(e *env) {
	tn := optional[backends.Tuner](e)
	forever := backends.Keep
	forever.TTL = 0
	if err := tn.Tune(e.ctx, e.tableName(), forever); !errors.Is(err, backends.ErrTableNotFound) {
		e.Errorf("Tune of a missing table: %v, want ErrTableNotFound", err)
	}
}
