//go:build integration

package hbase_test

import (
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestFilteredScanLimitPushdown: a filter runs on the region server, so a filtered scan with a limit
// asks for the limit and the server sends only matching rows, the limit of them, however many rows
// it skipped.
func TestFilteredScanLimitPushdown(t *testing.T) {
	b, cc := countingBackend(t)
	table := fillScanTable(t, b)
	ctx := testCtx(t)
	even := backends.ValueRegexFilter(backends.Column{Family: "d", Qualifier: "v"}, "^row0[0-9][02468]$")
	for _, reverse := range []bool{false, true} {
		cc.mu.Lock()
		cc.asked, cc.received = nil, 0
		cc.mu.Unlock()
		r := backends.Range{Start: []byte("row010")}
		want := []string{`"row010"`, `"row012"`, `"row014"`}
		if reverse {
			r = backends.Range{End: []byte("row025")}
			want = []string{`"row024"`, `"row022"`, `"row020"`}
		}
		rows, err := testkit.CollectErr(b.Scan(ctx, table, r, backends.ScanOptions{ReadOptions: backends.ReadOptions{Filter: &even}, Reverse: reverse, Limit: 3}))
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(rows); !slices.Equal(got, want) {
			t.Fatalf("reverse %v: keys %v, want %v", reverse, got, want)
		}
		cc.mu.Lock()
		if cc.received > 4 || len(cc.asked) != 1 {
			t.Errorf("reverse %v: %d scan RPCs asking for %v rows, %d rows sent; want one RPC, at most 4 rows (3 and the one at End)", reverse, len(cc.asked), cc.asked, cc.received)
		}
		cc.mu.Unlock()
	}
}
