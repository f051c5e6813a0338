package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// The exclusive jobs of the SIGKILL rounds (sigkill_test.go): an import of generation 2 and an index
// build, each under an exclusive fence of the child's, killed midway and finished by the parent.

func isExclusive(op string) bool { return strings.HasPrefix(op, "exclusive-") }

// killBuilds are the indexes an exclusive-index job builds, in turn, in the style of
// indextest.OrderIndexes: a unique one (every row's amount is its own), and a non-unique one over
// two columns with a covered one.
func killBuilds(t testing.TB) []client.IndexConfig {
	return []client.IndexConfig{
		{Name: "by_amount", Salter: testkit.Salter(t, "hash:3"), Unique: true, Parts: []client.IndexPart{client.ColumnPart("d", "amount")}},
		{Name: "by_buyer_seller", Salter: testkit.Salter(t, "hash:2:fields=1"), Covered: []client.Column{{Family: "d", Qualifier: "amount"}},
			Parts: []client.IndexPart{client.ColumnPart("d", "buyer"), client.ColumnPart("d", "seller")}},
	}
}

// exclusive runs the job's exclusive work under a fence of its own (takeOver: over a dead holder's,
// as the CLI's --resume does): the import of generation Gen or the build of the index Index.
// progress, when set, hears "rows N" (the import's rows written) or "buckets N" (the build's
// buckets done); the work waits hold midway (killHold).
func (j killJob) exclusive(t testing.TB, ctx context.Context, tbl *client.Table, takeOver bool, progress func(line string), hold time.Duration) error {
	if progress == nil {
		progress = func(string) {}
	}
	return underFence(ctx, tbl, client.ExclusiveOptions{Lease: j.Lease, TakeOver: takeOver}, func(x *client.ExclusiveTable) error {
		switch j.Op {
		case "exclusive-import":
			return importAll(ctx, x.Import, j.Gen, j.Rows, func(n int64) { progress(fmt.Sprint("rows ", n)) }, hold)
		case "exclusive-index":
			i := slices.IndexFunc(killBuilds(t), func(cfg client.IndexConfig) bool { return cfg.Name == j.Index })
			if i < 0 {
				return fmt.Errorf("no index %q to build", j.Index)
			}
			_, err := x.AddIndex(ctx, killBuilds(t)[i], func(p client.RebuildProgress) {
				progress(fmt.Sprint("buckets ", p.Buckets))
				if p.Buckets > 0 {
					time.Sleep(hold) // the bucket's worker waits; the other's bucket goes on
				}
			})
			return err
		}
		return fmt.Errorf("op %q is not an exclusive job", j.Op)
	})
}

// underFence runs work under an exclusive fence of tbl's and releases the fence whatever work's
// outcome, as the CLI's exclusive commands do.
func underFence(ctx context.Context, tbl *client.Table, opts client.ExclusiveOptions, work func(*client.ExclusiveTable) error) error {
	x, err := tbl.Exclusive(ctx, opts)
	if err != nil {
		return err
	}
	return errors.Join(work(x), x.Release(ctx))
}

// finishExclusive checks what the killed exclusive job left, before any repair, and finishes it: as
// --resume does (a take-over of the dead holder's fence), or, with lapse, once the dead holder's
// lease has run out and other writers have written again, by the next Exclusive. It returns a handle
// opened after, and whether the kill landed in the middle of the job's writes.
func finishExclusive(t *testing.T, c *client.Client, job killJob, done, lapse bool) (_ *client.Table, midway bool) {
	ctx := context.Background()
	tbl, err := c.OpenTable(ctx, job.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	fenced := false
	for _, ix := range tbl.Indexes() {
		all = append(all, ix.Name())
		fenced = fenced || ix.State() == client.IndexBuilding
	}
	if fenced {
		// First, while the dead holder's lease surely runs: another handle's write is refused.
		if err := tbl.Put(ctx, indextest.OrderKey("late0"), lateCells(0)...); !errors.Is(err, client.ErrFenced) {
			t.Fatalf("a write under the dead holder's fence: %v, want ErrFenced", err)
		}
	}
	// Reads of the main table work whatever the fence.
	if n, err := testkit.CountErr(tbl.Scan(ctx, client.Range{})); err != nil || n != job.Rows {
		t.Fatalf("main table under the dead holder's fence: %d rows, %v; want %d", n, err, job.Rows)
	}
	imported := countGen(t, tbl, 2)
	building := indextest.AssertServing(t, tbl)
	built := job.Op == "exclusive-index" && slices.Contains(all, job.Index)
	switch finished := imported == job.Rows || built; {
	case fenced && !slices.Equal(building, all):
		t.Fatalf("indexes building: %v; want all of %v: a fence moves every index", building, all)
	case !fenced && !finished:
		t.Fatalf("no index building, yet the job had not finished: %d rows of generation 2, indexes %v", imported, all)
	}
	switch {
	case job.Op == "exclusive-import":
		midway = !done && imported > 0 && imported < job.Rows
	case built:
		// A blind build killed midway leaves entries missing, never a wrong one.
		rep, err := indextest.Index(t, tbl, job.Index).Verify(ctx)
		if err != nil || rep.Stale != 0 || rep.Extra != 0 {
			t.Fatalf("the killed build of %s: %v, %v %q", job.Index, err, rep, rep.Examples)
		}
		midway = !done && rep.Entries > 0 && rep.Missing > 0
		t.Logf("the killed build left %v", rep)
	}
	t.Logf("building %v of %v; %d rows of generation 2; resumed by %s", building, all, imported, map[bool]string{false: "a take-over", true: "the next Exclusive once the lease ran out"}[lapse])
	if lapse && fenced {
		writeLapsed(t, tbl, job)
		if got := indextest.AssertServing(t, tbl); !slices.Equal(got, all) {
			t.Fatalf("indexes building once the lease ran out: %v; want all of %v until a repair", got, all)
		}
	}
	if err := job.exclusive(t, ctx, tbl, !lapse, nil, 0); err != nil {
		t.Fatalf("resuming the %s: %v", job.Op, err)
	}

	// What the resumed job leaves, to a handle that saw none of it.
	if tbl, err = c.OpenTable(ctx, job.Table, nil); err != nil {
		t.Fatal(err)
	}
	for _, ix := range tbl.Indexes() {
		if ix.State() != client.IndexActive {
			t.Fatalf("index %s is %s after the resumed job, want active", ix.Name(), ix.State())
		}
		// Verify before any query (a query repairs what it passes): exact as the job left it.
		if rep, err := ix.Verify(ctx); err != nil || rep.Problems() != 0 {
			t.Fatalf("after the resumed job: %v, %v %q", err, rep, rep.Examples)
		}
	}
	switch job.Op {
	case "exclusive-import":
		if n := countGen(t, tbl, 2); n != job.Rows {
			t.Fatalf("after the resumed import: %d of %d rows of generation 2", n, job.Rows)
		}
	case "exclusive-index":
		indextest.Index(t, tbl, job.Index)
	}
	return tbl, midway
}

// writeLapsed writes, through tbl, once the dead holder's lease has run out (until then its writes are
// fenced): a new row, an imported row moved to new values in every index, and one deleted. The
// protocol keeps the building indexes meanwhile.
func writeLapsed(t *testing.T, tbl *client.Table, job killJob) {
	ctx := context.Background()
	deadline := time.Now().Add(job.Lease + time.Minute) // the lease, then time for the write itself
	for {
		err := tbl.Put(ctx, indextest.OrderKey("late0"), lateCells(0)...)
		if err == nil {
			break
		}
		if !errors.Is(err, client.ErrFenced) || time.Now().After(deadline) {
			t.Fatalf("a write once the dead holder's lease ran out: %v", err)
		}
		time.Sleep(job.Fence / 5)
	}
	if err := tbl.Put(ctx, indextest.OrderKey("imp00001"), lateCells(1)...); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, indextest.OrderKey("imp00002")); err != nil {
		t.Fatal(err)
	}
}

// lateCells are the values a write after the lease gives a row: its own unique ext and amount.
func lateCells(i int) []client.Cell {
	return []client.Cell{
		{Family: "d", Qualifier: "seller", Value: []byte("late")},
		{Family: "d", Qualifier: "buyer", Value: []byte("late")},
		{Family: "d", Qualifier: "ext", Value: fmt.Appendf(nil, "late%d", i)},
		{Family: "d", Qualifier: "ts", Value: indextest.TS(9)},
		{Family: "d", Qualifier: "amount", Value: fmt.Appendf(nil, "late-%d", i)},
	}
}
