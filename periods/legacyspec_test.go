package periods_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// TestLegacyStoredSpec: a period table an earlier brine declared with --salt mod:8:field=2 (field 2
// counted from 1: ts of [host][ts]) holds that spelling in three places: its declaration, each period's
// row in its list, and each period table's meta. It opens against a declaration in the current spelling,
// shows that spelling, finds the rows that brine wrote (bucket ts % 8), adopts an existing period again
// without rewriting its row in another spelling, and leaves every stored string as it was.
func TestLegacyStoredSpec(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b)
	defer c.Close()
	month, _ := periods.ParseInterval("month")
	schema := testkit.Schema(t, "host,ts:int64")
	cfg := periods.Config{Interval: month, TimeField: 1, Table: client.TableConfig{Salter: testkit.Salter(t, "mod:8:field=k1"), KeySchema: schema}}
	p, err := periods.Create(ctx, c, "ev", cfg)
	if err != nil {
		t.Fatal(err)
	}
	jan := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	info, err := p.CreatePeriod(ctx, jan, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Spell it as the earlier brine did, in the store.
	legacy := func(table string) {
		old, err := b.TableMeta(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		next := maps.Clone(old)
		for k, v := range next {
			if v == "mod:8:field=k1" {
				next[k] = "mod:8:field=2"
			}
		}
		if err := b.RewriteTableMeta(ctx, table, old, next); err != nil {
			t.Fatal(err)
		}
	}
	legacy("ev")
	legacy(info.Table)
	listRow := func() []backends.Row {
		var rows []backends.Row
		for r, err := range b.Scan(ctx, "ev", backends.Range{}, backends.ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
		return rows
	}
	for _, r := range listRow() {
		muts := []backends.Mutation{{Key: r.Key, Cells: []backends.Cell{{Family: client.DefaultFamily, Qualifier: "spec", Value: []byte("mod:8:field=2")}}}}
		if rowErrs, err := b.Apply(ctx, "ev", muts); err != nil || rowErrs != nil {
			t.Fatal(err, rowErrs)
		}
	}
	ts := time.Date(2026, 1, 12, 0, 0, 0, 123_000_000, time.UTC).UnixMilli()
	k, _ := schema.Encode("web1", ts)
	phys := append([]byte{byte(ts % 8)}, k...)
	if rowErrs, err := b.Apply(ctx, info.Table, []backends.Mutation{{Key: phys,
		Cells: []backends.Cell{{Family: client.DefaultFamily, Qualifier: "v", Value: []byte("x"), Timestamp: 1}}}}); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}

	c2 := client.New(b)
	defer c2.Close()
	for _, want := range []*periods.Config{nil, &cfg} {
		p, err := periods.Open(ctx, c2, "ev", want)
		if err != nil {
			t.Fatalf("Open (declaration given: %t): %v", want != nil, err)
		}
		if got := p.Config().Table.Salter.Spec(); got != "mod:8:field=k1" {
			t.Errorf("Config's spec %q", got)
		}
		if ps := p.Periods(); len(ps) != 1 || ps[0].Spec != "mod:8:field=k1" {
			t.Errorf("Periods() = %+v", ps)
		}
		if row, err := p.Get(ctx, k); err != nil || string(row.Cells[0].Value) != "x" {
			t.Errorf("Get of the row the earlier brine wrote: %v, %v", row, err)
		}
		if _, err := p.CreatePeriod(ctx, jan, nil); err != nil { // the table exists: adopted
			t.Fatalf("CreatePeriod of the existing period: %v", err)
		}
	}
	for _, table := range []string{"ev", info.Table} {
		meta, err := b.TableMeta(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		for key, v := range meta {
			if v == "mod:8:field=k1" {
				t.Errorf("%s's meta %s = %q, rewritten", table, key, v)
			}
		}
	}
	for _, r := range listRow() {
		for _, cell := range r.Cells {
			if cell.Qualifier == "spec" && string(cell.Value) != "mod:8:field=2" {
				t.Errorf("period row %s: spec %q, rewritten", r.Key, cell.Value)
			}
		}
	}
}
