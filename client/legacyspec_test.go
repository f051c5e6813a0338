package client_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Brines before field numbers counted from 0 stored mod's field as field=K, K counted from 1: a table
// created so keeps that meaning. These tests lay a table out as such a brine did, through the backend
// (its meta, and rows under the physical keys it wrote: bucket ts % N, worked out by hand), and open
// it with this one.

// legacyEvents is the key schema [host][ts] of the tests: field 2 counted from 1 is ts, k1.
const legacyEvents = "host,ts:int64"

// legacyRow is one row an earlier brine wrote, with its bucket under mod:8 (ts % 8) and mod:4.
type legacyRow struct {
	host       string
	ts         int64
	mod8, mod4 byte
	value      string
	logical    []byte
	physical   []byte // under mod:8
}

func legacyRows(t *testing.T) []legacyRow {
	t.Helper()
	ks, err := keys.ParseSchema(legacyEvents)
	if err != nil {
		t.Fatal(err)
	}
	rows := []legacyRow{
		{host: "web1", ts: 1700000000123, mod8: 3, mod4: 3, value: "a"},
		{host: "web2", ts: 1700000000128, mod8: 0, mod4: 0, value: "b"},
		{host: "db", ts: 1700000000134, mod8: 6, mod4: 2, value: "c"},
	}
	for i := range rows {
		if rows[i].logical, err = ks.Encode(rows[i].host, rows[i].ts); err != nil {
			t.Fatal(err)
		}
		rows[i].physical = append([]byte{rows[i].mod8}, rows[i].logical...)
	}
	return rows
}

// createLegacyTable creates table name as an earlier brine did with --salt mod:8:field=2 --key
// host,ts:int64, and writes rows under its physical keys.
func createLegacyTable(t *testing.T, b backends.Backend, name string, rows []legacyRow) {
	t.Helper()
	ctx := context.Background()
	err := b.CreateTable(ctx, name, backends.TableOptions{Families: []string{client.DefaultFamily},
		Meta: map[string]string{client.MetaSaltSpec: "mod:8:field=2", client.MetaKeySchema: legacyEvents}})
	if err != nil {
		t.Fatal(err)
	}
	muts := make([]backends.Mutation, len(rows))
	for i, r := range rows {
		muts[i] = backends.Mutation{Key: r.physical, Cells: []backends.Cell{{Family: client.DefaultFamily, Qualifier: "v", Value: []byte(r.value), Timestamp: 1}}}
	}
	if rowErrs, err := b.Apply(ctx, name, muts); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
}

func metaSpec(t *testing.T, b backends.Backend, table string) string {
	t.Helper()
	meta, err := b.TableMeta(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	return meta[client.MetaSaltSpec]
}

// TestLegacyStoredSpecKeepsMeaning: a table an earlier brine made with mod:8:field=2 opens with its
// spec shown as mod:8:field=k1; the rows that brine wrote are found by Get and Scan; a row written now
// lands in the bucket that brine would have chosen; a salter given in the current spelling is the same
// salting, one reading another field is ErrSpecMismatch; the stored string is left as it was.
func TestLegacyStoredSpecKeepsMeaning(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	rows := legacyRows(t)
	createLegacyTable(t, b, "ev", rows)
	c := client.New(b)
	defer c.Close()

	for _, tc := range []struct {
		name  string
		given string // "": adopt the stored spec
		err   error
	}{
		{"adopted", "", nil},
		{"given in the current spelling", "mod:8:field=k1", nil},
		{"given another field", "mod:8:field=k0", client.ErrSpecMismatch},
		{"given another bucket count", "mod:4:field=k1", client.ErrSpecMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var given salting.Salter
			if tc.given != "" {
				given = testkit.Salter(t, tc.given)
			}
			tbl, err := c.OpenTable(ctx, "ev", given)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("OpenTable = %v; want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tbl.Salter().Spec(); got != "mod:8:field=k1" {
				t.Fatalf("Salter().Spec() = %q; want mod:8:field=k1", got)
			}
			for _, r := range rows {
				row, err := tbl.Get(ctx, r.logical)
				if err != nil || len(row.Cells) != 1 || string(row.Cells[0].Value) != r.value {
					t.Errorf("Get %s/%d = %v, %v; want %q", r.host, r.ts, row, err, r.value)
				}
				if b, err := tbl.Salter().Bucket(r.logical); err != nil || b != int(r.mod8) {
					t.Errorf("bucket of %s/%d = %d, %v; want %d as before", r.host, r.ts, b, err, r.mod8)
				}
			}
			n := 0
			for row, err := range tbl.Scan(ctx, client.Range{}) {
				if err != nil {
					t.Fatal(err)
				}
				if row.Key == nil {
					t.Error("a row without a key")
				}
				n++
			}
			if n != len(rows) {
				t.Errorf("Scan: %d rows; want %d", n, len(rows))
			}
		})
	}

	// A row written now goes where the earlier brine put its keys: bucket ts % 8, byte 0.
	tbl, err := c.OpenTable(ctx, "ev", nil)
	if err != nil {
		t.Fatal(err)
	}
	ks, _ := keys.ParseSchema(legacyEvents)
	k, _ := ks.Encode("web9", int64(1700000000125)) // 125 % 8 = 5
	if err := tbl.Put(ctx, k, client.Cell{Family: client.DefaultFamily, Qualifier: "v", Value: []byte("d")}); err != nil {
		t.Fatal(err)
	}
	raw, err := b.Read(ctx, "ev", [][]byte{append([]byte{5}, k...)}, backends.ReadOptions{})
	if err != nil || len(raw) != 1 || len(raw[0].Cells) != 1 {
		t.Fatalf("the new row under physical key 05+key: %v, %v", raw, err)
	}

	// Describe and CreateOrOpenTable see the same salting; the meta keeps the stored spelling.
	cfg, err := c.Describe(ctx, "ev")
	if err != nil || cfg.Salter.Spec() != "mod:8:field=k1" {
		t.Fatalf("Describe = %v, %v", cfg.Salter, err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "ev", client.TableConfig{Salter: testkit.Salter(t, "mod:8:field=k1"), KeySchema: ks}); err != nil {
		t.Fatalf("CreateOrOpenTable with the current spelling: %v", err)
	}
	if got := metaSpec(t, b, "ev"); got != "mod:8:field=2" {
		t.Errorf("stored spec %q; want it left as mod:8:field=2", got)
	}
}

// TestLegacyStoredIndexSpec: an index an earlier brine declared with salt=mod:4:field=1 (its entry
// key's field 1 counted from 1, ts; d:v covered, so that every put writes an entry) keeps its entries' buckets: queries find the rows, new entries
// land as before, a declaration in the current spelling matches it, and the meta is left as stored.
func TestLegacyStoredIndexSpec(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b, client.WithRouteRefresh(testRefresh))
	defer c.Close()
	ks, _ := keys.ParseSchema(legacyEvents)
	ix, err := client.ParseIndexConfig("by_ts", "salt=mod:4:field=k0|key=k1|cover=d:v")
	if err != nil {
		t.Fatal(err)
	}
	decl := client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: ks, Indexes: []client.IndexConfig{ix}}
	if _, err := c.CreateTable(ctx, "ev", decl); err != nil {
		t.Fatal(err)
	}
	// Spell the index as the earlier brine stored it, in the main table's meta and the index table's.
	ixTable := client.IndexTableName("ev", "by_ts")
	legacy := func(table string, edit func(meta map[string]string)) {
		old, err := b.TableMeta(ctx, table)
		if err != nil {
			t.Fatal(err)
		}
		next := maps.Clone(old)
		edit(next)
		if err := b.RewriteTableMeta(ctx, table, old, next); err != nil {
			t.Fatal(err)
		}
	}
	legacy("ev", func(m map[string]string) {
		if m["brine.index.by_ts"] != "salt=mod:4:field=k0|key=k1|cover=d:v|entries=2" {
			t.Fatalf("index meta %q", m["brine.index.by_ts"])
		}
		m["brine.index.by_ts"] = "salt=mod:4:field=1|key=k1|cover=d:v|entries=2"
	})
	legacy(ixTable, func(m map[string]string) { m[client.MetaSaltSpec] = "mod:4:field=1" })

	c2 := client.New(b, client.WithRouteRefresh(testRefresh))
	defer c2.Close()
	tbl, err := c2.CreateOrOpenTable(ctx, "ev", decl)
	if err != nil {
		t.Fatalf("CreateOrOpenTable with the current spelling: %v", err)
	}
	byTS, err := tbl.Index("by_ts")
	if err != nil {
		t.Fatal(err)
	}
	if got := byTS.Spec(); got != "salt=mod:4:field=k0|key=k1|cover=d:v" {
		t.Errorf("Index.Spec() = %q", got)
	}
	rows := legacyRows(t)
	for _, r := range rows {
		if err := tbl.Put(ctx, r.logical, client.Cell{Family: client.DefaultFamily, Qualifier: "v", Value: []byte(r.value)}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for r, err := range byTS.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		// The entry key starts with ts; its bucket is ts % 4, as the earlier brine placed entries.
		want := -1
		for _, lr := range rows {
			if bytes.Equal(lr.logical, r.Key) {
				want = int(lr.mod4)
			}
		}
		if got, err := byTS.Config().Salter.Bucket(r.IndexKey); err != nil || got != want {
			t.Errorf("entry of %x: bucket %d, %v; want %d", r.Key, got, err, want)
		}
	}
	if n != len(rows) {
		t.Errorf("index scan: %d rows; want %d", n, len(rows))
	}
	raw := 0
	for row, err := range b.Scan(ctx, ixTable, backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		raw++
		if row.Key[0] > 3 {
			t.Errorf("index entry %x outside mod:4's buckets", row.Key)
		}
	}
	if raw != len(rows) {
		t.Errorf("index table: %d entries; want %d", raw, len(rows))
	}
	meta, err := b.TableMeta(ctx, "ev")
	if err != nil || meta["brine.index.by_ts"] != "salt=mod:4:field=1|key=k1|cover=d:v|entries=2" || metaSpec(t, b, ixTable) != "mod:4:field=1" {
		t.Errorf("stored index specs changed: %q, %q (%v)", meta["brine.index.by_ts"], metaSpec(t, b, ixTable), err)
	}
	// A user declaring the old spelling is told what to write.
	_, err = client.ParseIndexConfig("by_ts", "salt=mod:4:field=1|key=k1")
	if want := `index "by_ts" spec "salt=mod:4:field=1|key=k1": salting: invalid spec: "mod:4:field=1": field=1 counts fields from 1, brine's old spelling; write mod:4:field=k0: fields count from 0 (k0 is the first)`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("ParseIndexConfig of the old spelling: %v; want it to end %s", err, want)
	}
}

// TestLegacyRebucketResumes: a rebucket that an earlier brine started from mod:8:field=2 to
// mod:4:field=2, and left in its pause step, resumes under the current spelling of its target: its
// status shows that spelling, a handle given it opens the table, and the rows end in bucket ts % 4.
func TestLegacyRebucketResumes(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	rows := legacyRows(t)
	createLegacyTable(t, b, "ev", rows)
	c := client.New(b, client.WithRouteRefresh(testRefresh), client.WithLogger(slog.New(slog.DiscardHandler)))
	defer c.Close()
	tbl, err := c.OpenTable(ctx, "ev", nil)
	if err != nil {
		t.Fatal(err)
	}
	to := testkit.Salter(t, "mod:4:field=k1")
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	err = tbl.Rebucket(stop, to, client.RebucketOptions{Fence: time.Millisecond, Progress: func(p client.RebucketProgress) {
		if p.State == "pause" {
			cancel() // the process dies after recording the pause step
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted rebucket: %v", err)
	}
	// The directory row as the earlier brine wrote it: both specs in its spelling.
	for q, v := range map[string]string{"spec": "mod:8:field=2", "tspec": "mod:4:field=2"} {
		muts := []backends.Mutation{{Key: []byte("ev"), Cells: []backends.Cell{{Family: "d", Qualifier: q, Value: []byte(v)}}}}
		if rowErrs, err := b.Apply(ctx, route.DirTable, muts); err != nil || rowErrs != nil {
			t.Fatal(err, rowErrs)
		}
	}
	st, err := c.RebucketStatus(ctx, "ev")
	if err != nil || st.State != "pause" || st.Spec != "mod:8:field=k1" || st.TargetSpec != "mod:4:field=k1" {
		t.Fatalf("RebucketStatus = %+v, %v; want pause from mod:8:field=k1 to mod:4:field=k1", st, err)
	}
	for _, given := range []string{"mod:8:field=k1", "mod:4:field=k1"} {
		if _, err := c.OpenTable(ctx, "ev", testkit.Salter(t, given)); err != nil {
			t.Errorf("OpenTable given %s during the rebucket: %v", given, err)
		}
	}
	tbl, err = client.New(b, client.WithRouteRefresh(testRefresh), client.WithLogger(slog.New(slog.DiscardHandler))).OpenTable(ctx, "ev", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Rebucket(ctx, to, client.RebucketOptions{Fence: time.Millisecond, Grace: -1}); err != nil {
		t.Fatalf("resumed rebucket: %v", err)
	}
	st, err = c.RebucketStatus(ctx, "ev")
	if err != nil || st.State != "" || st.Spec != "mod:4:field=k1" {
		t.Fatalf("after: %+v, %v", st, err)
	}
	for _, r := range rows {
		row, err := tbl.Get(ctx, r.logical)
		if err != nil || string(row.Cells[0].Value) != r.value {
			t.Errorf("Get %s/%d after the rebucket = %v, %v", r.host, r.ts, row, err)
		}
		raw, err := b.Read(ctx, st.Table, [][]byte{append([]byte{r.mod4}, r.logical...)}, backends.ReadOptions{})
		if err != nil || len(raw) != 1 || len(raw[0].Cells) == 0 {
			t.Errorf("%s/%d not under bucket %d of %s: %v, %v", r.host, r.ts, r.mod4, st.Table, raw, err)
		}
	}
}
