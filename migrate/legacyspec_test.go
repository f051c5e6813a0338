package migrate_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// TestCopyResumesLegacyCheckpoint: a copy into mod:4:field=2 that an earlier brine interrupted (its
// checkpoint's options and the target's meta in that spelling, field 2 counted from 1) resumes under
// mod:4:field=k1, the same salting, and is refused under another salting; the target then holds every
// row in bucket ts % 4.
func TestCopyResumesLegacyCheckpoint(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "memory")
	schema := testkit.Schema(t, "host,ts:int64")
	src, err := from.CreateTable(ctx, "ev", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	muts := make([]client.Mutation, n)
	for i := range muts {
		k, _ := schema.Encode("h", int64(1700000000000+i))
		muts[i] = client.Mutation{Key: k, Cells: []client.Cell{{Family: client.DefaultFamily, Qualifier: "v", Value: []byte("x"), Timestamp: 1}}}
	}
	if rowErrs, err := src.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
		t.Fatal(err, rowErrs)
	}
	cctx, cancel := context.WithCancel(ctx)
	opts := migrate.Options{As: "ev2", Salter: testkit.Salter(t, "mod:4:field=k1"), ChunkRows: 50, Workers: 1,
		Progress: func(p migrate.Progress) {
			if p.Rows >= 200 {
				cancel()
			}
		}}
	st, err := migrate.Copy(cctx, from, to, "ev", opts)
	cancel()
	if !errors.Is(err, context.Canceled) || st.Rows >= n {
		t.Fatalf("interrupted copy: %+v, %v", st, err)
	}
	// As the earlier brine stored them: the checkpoint's options and the target's spec.
	b := to.Backend()
	cp := migrate.CheckpointTable("ev2")
	rows, err := b.Read(ctx, cp, [][]byte{[]byte("job")}, backends.ReadOptions{})
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	var fp string
	for _, c := range rows[0].Cells {
		if c.Qualifier == "options" {
			fp = string(c.Value)
		}
	}
	if !strings.Contains(fp, " salt=mod:4:field=k1 ") {
		t.Fatalf("checkpoint options %q", fp)
	}
	fp = strings.Replace(fp, " salt=mod:4:field=k1 ", " salt=mod:4:field=2 ", 1)
	if rowErrs, err := b.Apply(ctx, cp, []backends.Mutation{{Key: []byte("job"),
		Cells: []backends.Cell{{Family: client.DefaultFamily, Qualifier: "options", Value: []byte(fp)}}}}); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	old, err := b.TableMeta(ctx, "ev2")
	if err != nil {
		t.Fatal(err)
	}
	next := maps.Clone(old)
	next[client.MetaSaltSpec] = "mod:4:field=2"
	if err := b.RewriteTableMeta(ctx, "ev2", old, next); err != nil {
		t.Fatal(err)
	}

	opts.Progress, opts.Resume = nil, true
	other := opts
	other.Salter = testkit.Salter(t, "mod:8:field=k1")
	if _, err := migrate.Copy(ctx, from, to, "ev", other); !errors.Is(err, client.ErrSpecMismatch) && !errors.Is(err, migrate.ErrResumeMismatch) {
		t.Errorf("resume under another salting: %v; want a refusal", err)
	}
	rest, err := migrate.Copy(ctx, from, to, "ev", opts)
	if err != nil {
		t.Fatalf("resume under the current spelling: %v", err)
	}
	if rest.Rows+st.Rows < n {
		t.Errorf("resumed copy wrote %d rows after %d, want the rest of %d", rest.Rows, st.Rows, n)
	}
	got := 0
	for row, err := range b.Scan(ctx, "ev2", backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		vals, derr := schema.Decode(row.Key[1:])
		if derr != nil || int64(row.Key[0]) != vals[1].(int64)%4 {
			t.Errorf("target row %x: bucket %d, want ts %% 4 (%v)", row.Key, row.Key[0], derr)
		}
		got++
	}
	if got != n {
		t.Errorf("target holds %d rows, want %d", got, n)
	}
}
