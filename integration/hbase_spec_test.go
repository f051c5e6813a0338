//go:build integration

package integration

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// TestOpenWithConflictingSpec: a table keeps the spec it was created with. Opening it with any other
// spec (bucket count, strategy, lead, none) fails with client.ErrSpecMismatch and leaves the
// physical table byte for byte as it was; opening with no salter, or the same spec, adopts the stored
// one and reads and writes where the creator did.
func TestOpenWithConflictingSpec(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 2*time.Minute)
	tbl := e.salted(t, "hash:8", 0)
	keys := make([][]byte, 200)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user%05d", i)
	}
	writeBrine(t, tbl, keys)
	before := rawScan(t, e.raw, tbl.Name(), nil, nil)
	if len(before) != len(keys) {
		t.Fatalf("physical rows: %d, want %d", len(before), len(keys))
	}

	for _, spec := range []string{"hash:16", "hash:4", "md5hex:1", "mod:8:offset=4,width=1", "hash:8:prefix=4", "phoenix:8", "none"} {
		t.Run(spec, func(t *testing.T) {
			s := testkit.Salter(t, spec)
			other, err := e.client.OpenTable(ctx, tbl.Name(), s)
			if !errors.Is(err, client.ErrSpecMismatch) {
				t.Fatalf("OpenTable with %s: table %v, error %v; want ErrSpecMismatch", spec, other, err)
			}
			if other != nil {
				t.Errorf("OpenTable with %s returned a table along with its error", spec)
			}
			if after := rawScan(t, e.raw, tbl.Name(), nil, nil); diffRows(after, before) != "" {
				t.Fatalf("physical table changed by a refused open: %s", diffRows(after, before))
			}
		})
	}

	same := testkit.Salter(t, "hash:8")
	for _, tc := range []struct {
		name string
		s    salting.Salter
	}{{"no salter", nil}, {"same spec", same}} {
		name, s := tc.name, tc.s
		t.Run(name, func(t *testing.T) {
			adopted, err := e.client.OpenTable(ctx, tbl.Name(), s)
			if err != nil {
				t.Fatalf("OpenTable: %v", err)
			}
			if got := adopted.Salter().Spec(); got != "hash:8" {
				t.Fatalf("adopted spec %q, want hash:8", got)
			}
			rows, err := collect(adopted.Scan(ctx, client.PrefixRange([]byte("user"))))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]row, len(keys))
			for i, k := range keys {
				want[i] = expectRow(k)
			}
			if d := diffRows(rows, want); d != "" {
				t.Fatalf("scan through the adopted spec: %s", d)
			}
			// A write lands on the creator's physical key.
			key := []byte("adopted-" + name)
			if err := adopted.Put(ctx, key, client.Cell{Family: fam, Qualifier: "q", Value: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			phys, err := tbl.Salter().AppendPhysical(nil, key)
			if err != nil {
				t.Fatal(err)
			}
			if got := rawScan(t, e.raw, tbl.Name(), phys, append(phys, 0)); len(got) != 1 {
				t.Fatalf("row %q at physical key %q: %d rows", key, phys, len(got))
			}
			if _, err := tbl.Get(ctx, key); err != nil {
				t.Fatalf("creator's handle reads the adopted write: %v", err)
			}
		})
	}
}
