package periodtest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
)

// testMetadata checks what is stored with a period table: the declaration, checked on open; the
// period list, shared by every handle; retention.
func testMetadata(t *testing.T, s Store) {
	ctx := ctxFor(t)
	c := client.New(s.Open(t))
	t.Cleanup(func() { c.Close() })
	base := name(s, "meta")
	p := newTable(t, c, base, 1)
	if _, err := p.CreateAhead(ctx, date(2026, 1, 10), 4, nil); err != nil {
		t.Fatal(err)
	}
	if again, err := p.CreateAhead(ctx, date(2026, 1, 10), 4, nil); err != nil || len(again) != 0 {
		t.Fatalf("second CreateAhead created %v, %v; want nothing", again, err)
	}
	if n := len(p.Periods()); n != 5 {
		t.Fatalf("%d periods, want 5", n)
	}

	q, err := periods.Open(ctx, c, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Periods(), p.Periods()) {
		t.Errorf("reopened periods %v, want %v", q.Periods(), p.Periods())
	}
	good := p.Config()
	for _, tc := range []struct {
		name string
		mod  func(*periods.Config)
	}{
		{"period", func(c *periods.Config) { c.Interval, _ = periods.ParseInterval("week") }},
		{"field", func(c *periods.Config) { c.TimeField = 0 }},
		{"salt", func(c *periods.Config) { c.Table.Salter = testkit.Salter(t, "hash:8") }},
		{"retention", func(c *periods.Config) { c.Retention.Keep = 4 }},
	} {
		want := good
		tc.mod(&want)
		if _, err := periods.Open(ctx, c, base, &want); !errors.Is(err, client.ErrSpecMismatch) {
			t.Errorf("open with another %s: %v, want ErrSpecMismatch", tc.name, err)
		}
	}
	if _, err := periods.Open(ctx, c, base, &good); err != nil {
		t.Errorf("open with the stored declaration: %v", err)
	}
	// One period's table is an ordinary salted table, not a period table.
	if _, err := periods.Open(ctx, c, base+"_2026_01", nil); !errors.Is(err, client.ErrSpecMismatch) {
		t.Errorf("open one period's table as a period table: %v, want ErrSpecMismatch", err)
	}
	if _, err := periods.Open(ctx, c, base+"_nothing", nil); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("open a missing table: %v, want ErrTableNotFound", err)
	}

	// Keep 3: in mid-April, January goes; May, created ahead, does not count.
	now := date(2026, 4, 15)
	want := []string{base + "_2026_01"}
	var names []string
	for _, info := range p.Expired(now) {
		names = append(names, info.Table)
	}
	if !slices.Equal(names, want) {
		t.Errorf("Expired = %v, want %v", names, want)
	}
	if _, err := p.Expire(ctx, now); err != nil {
		t.Fatal(err)
	}
	if err := q.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(q.Periods()); n != 4 {
		t.Errorf("after Expire another handle sees %d periods, want 4", n)
	}
	tables, err := c.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if slices.Contains(tables, w) {
			t.Errorf("expired table %s still exists", w)
		}
	}

	// A table that finds a key's time with a function must be opened with one.
	fnBase := name(s, "metafn")
	per, _ := periods.ParseInterval("day")
	cfg := periods.Config{Interval: per, Table: client.TableConfig{Salter: testkit.Salter(t, "hash:2")},
		TimeOf: func(key []byte) (time.Time, error) {
			ms, err := keys.Int64At(key, 0)
			return time.UnixMilli(ms), err
		}}
	fp, err := periods.Create(ctx, c, fnBase, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fp.Drop(ctx); err != nil {
			t.Errorf("drop %s: %v", fnBase, err)
		}
	})
	if _, err := periods.Open(ctx, c, fnBase, nil); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("open without TimeOf: %v, want ErrInvalidArgument", err)
	}
	if _, err := periods.Open(ctx, c, fnBase, &cfg); err != nil {
		t.Errorf("open with TimeOf: %v", err)
	}
	if _, err := fp.CreateAhead(ctx, date(2026, 11, 23), 0, nil); err != nil {
		t.Fatal(err)
	}
	sch := testkit.Schema(t, "ts:int64")
	key := mustEncode(sch, date(2026, 11, 23).Add(time.Hour).UnixMilli())
	if err := fp.Put(ctx, key, cells("v")...); err != nil {
		t.Fatal(err)
	}
	if got := fp.Periods(); len(got) != 1 || got[0].Table != fnBase+"_2026_11_23" {
		t.Errorf("day periods %v, want %s_2026_11_23", got, fnBase)
	}
	if _, err := fp.Get(ctx, key); err != nil {
		t.Errorf("Get: %v", err)
	}
}
