package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

const exclusiveRefresh = 20 * time.Millisecond

// exclusiveOrders creates the order table with indextest.OrderIndexes on b, through a client that
// rereads definitions every exclusiveRefresh.
func exclusiveOrders(t *testing.T, b backends.Backend) (*client.Client, *client.Table) {
	t.Helper()
	c := client.New(b, client.WithRouteRefresh(exclusiveRefresh), client.WithLogger(slog.New(slog.DiscardHandler)))
	tbl, err := c.CreateTable(context.Background(), "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: indextest.OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteTable(context.Background(), "orders") })
	return c, tbl
}

func orderRow(no, seller, ext string, ts uint64) client.ImportRow {
	return client.ImportRow{Mutation: client.Mutation{Key: indextest.OrderKey(no), Cells: []client.Cell{
		{Family: "d", Qualifier: "seller", Value: []byte(seller)},
		{Family: "d", Qualifier: "buyer", Value: []byte("b" + no)},
		{Family: "d", Qualifier: "ext", Value: []byte(ext)},
		{Family: "d", Qualifier: "ts", Value: indextest.TS(ts)},
		{Family: "d", Qualifier: "amount", Value: []byte(no)},
	}}}
}

func rowsOf(rows []client.ImportRow) func(func(client.ImportRow, error) bool) {
	return func(yield func(client.ImportRow, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// exclusive fences tbl with the test's short fence.
func exclusive(t *testing.T, tbl *client.Table, opts client.ExclusiveOptions) *client.ExclusiveTable {
	t.Helper()
	opts.Fence = 3 * exclusiveRefresh
	x, err := tbl.Exclusive(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestExclusiveImport: an exclusive Import into an empty table, then one over it that moves rows
// between sellers, deletes some and repeats keys, leaves every index exact once released, and each
// unique value taken twice fails the second row alone; with the default entry buffer (one sorted run
// per Import) and with one of a byte (a run per batch).
func TestExclusiveImport(t *testing.T) {
	for name, open := range indexStores {
		for _, buffer := range []int{0, 1} {
			t.Run(fmt.Sprint(name, "/buffer=", buffer), func(t *testing.T) { testExclusiveImport(t, open, buffer) })
		}
	}
}

func testExclusiveImport(t *testing.T, open func(*testing.T) backends.Backend, buffer int) {
	ctx := context.Background()
	_, tbl := exclusiveOrders(t, open(t))
	var first []client.ImportRow
	for i := range 300 {
		first = append(first, orderRow(fmt.Sprint("o", i), fmt.Sprint("s", i%7), fmt.Sprint("e", i), uint64(i)))
	}
	first = append(first, orderRow("dup", "s1", "e5", 1)) // e5 is o5's: refused
	x := exclusive(t, tbl, client.ExclusiveOptions{EntryBuffer: buffer})
	var failed []client.FailedRow
	stats, err := x.Import(ctx, rowsOf(first), client.ImportOptions{BatchRows: 16, OnFailure: func(f client.FailedRow) { failed = append(failed, f) }})
	if !errors.Is(err, client.ErrRowsFailed) || stats.Written != 300 || len(failed) != 1 || !errors.Is(failed[0].Err, client.ErrUniqueViolation) {
		t.Fatalf("first import: %v, %+v, failed %v", err, stats, failed)
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitRefresh()
	verifyExact(t, tbl)

	var second []client.ImportRow
	for i := range 100 {
		second = append(second, orderRow(fmt.Sprint("o", i), fmt.Sprint("s", i%3), fmt.Sprint("f", i), uint64(1000+i)))
	}
	for i := 100; i < 120; i++ {
		second = append(second, client.ImportRow{Mutation: client.Mutation{Key: indextest.OrderKey(fmt.Sprint("o", i)), Delete: true}})
	}
	second = append(second, orderRow("o7", "s9", "f7", 2000))    // a repeat: the last wins
	second = append(second, orderRow("new", "s1", "e150", 3000)) // o150's value: refused
	x = exclusive(t, tbl, client.ExclusiveOptions{EntryBuffer: buffer})
	failed = nil
	stats, err = x.Import(ctx, rowsOf(second), client.ImportOptions{BatchRows: 7, OnFailure: func(f client.FailedRow) { failed = append(failed, f) }})
	if !errors.Is(err, client.ErrRowsFailed) || stats.Duplicates != 1 || len(failed) != 1 || !errors.Is(failed[0].Err, client.ErrUniqueViolation) {
		t.Fatalf("second import: %v, %+v, failed %v", err, stats, failed)
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitRefresh()
	verifyExact(t, tbl)
	row, err := tbl.Get(ctx, indextest.OrderKey("o7"))
	if err != nil || string(cellValue(row, "seller")) != "s9" {
		t.Fatalf("o7: %v %v", row, err)
	}
}

func cellValue(row client.Row, q string) []byte {
	for _, c := range row.Cells {
		if c.Qualifier == q {
			return c.Value
		}
	}
	return nil
}

// verifyExact checks every index against the main table with Verify before any query runs (queries
// repair what they pass), then with the queries.
func verifyExact(t *testing.T, tbl *client.Table) {
	t.Helper()
	for _, ix := range tbl.Indexes() {
		rep, err := ix.Verify(context.Background())
		if err != nil || rep.Problems() != 0 {
			t.Fatalf("index %s: %v, %v %q", ix.Name(), err, rep, rep.Examples)
		}
	}
	indextest.AssertIndexes(t, tbl)
}

// waitRefresh outlasts the handles' refresh interval: they then see the fence's end.
func waitRefresh() { time.Sleep(3 * exclusiveRefresh) }

// TestExclusiveFencesOtherHandles: while a fence holds, every other handle's writes fail with
// ErrFenced (retryable, naming the holder), its reads work, queries by index fail with
// ErrIndexBuilding, and a second Exclusive is refused; after Release all of it works again.
func TestExclusiveFencesOtherHandles(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	_, tbl := exclusiveOrders(t, b)
	if err := tbl.Put(ctx, indextest.OrderKey("o1"), orderRow("o1", "s1", "e1", 1).Cells...); err != nil {
		t.Fatal(err)
	}
	other, err := client.New(b, client.WithRouteRefresh(exclusiveRefresh)).OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	x := exclusive(t, tbl, client.ExclusiveOptions{Holder: "loader-1"})
	err = other.Put(ctx, indextest.OrderKey("o2"), orderRow("o2", "s1", "e2", 1).Cells...)
	if !errors.Is(err, client.ErrFenced) || !client.IsRetryable(err) || !strings.Contains(err.Error(), "loader-1") {
		t.Fatalf("a write under the fence: %v, want a retryable ErrFenced naming the holder", err)
	}
	if _, err := other.Get(ctx, indextest.OrderKey("o1")); err != nil {
		t.Fatalf("a read under the fence: %v", err)
	}
	if _, err := testkit.CountErr(indextest.Index(t, other, "by_seller").Scan(ctx, client.Range{})); !errors.Is(err, client.ErrIndexBuilding) {
		t.Fatalf("a query under the fence: %v, want ErrIndexBuilding", err)
	}
	if _, err := other.Exclusive(ctx, client.ExclusiveOptions{Fence: time.Millisecond}); !errors.Is(err, client.ErrFenced) {
		t.Fatalf("a second Exclusive: %v, want ErrFenced", err)
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitRefresh()
	if err := other.Put(ctx, indextest.OrderKey("o2"), orderRow("o2", "s1", "e2", 1).Cells...); err != nil {
		t.Fatalf("a write after the release: %v", err)
	}
	indextest.AssertIndexes(t, other)
}

// TestExclusiveTakeOver: a holder that dies mid-import (its entries written, its rows not: here an
// entry written around it, as a crash between the two leaves) keeps the fence until a new holder
// takes it over; that holder's Release repairs what was left and the indexes are exact.
func TestExclusiveTakeOver(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	_, tbl := exclusiveOrders(t, b)
	x := exclusive(t, tbl, client.ExclusiveOptions{Holder: "dies"})
	if _, err := x.Import(ctx, rowsOf([]client.ImportRow{orderRow("o1", "s1", "e1", 1)}), client.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// The dead holder's last batch: its entry landed, its row did not.
	ghost := indextest.Index(t, tbl, "by_seller")
	key, _, err := ghost.EntryKey(indextest.OrderKey("o2"), orderRow("o2", "s2", "e2", 2).Cells)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(ctx, client.IndexTableName("orders", "by_seller"), []backends.Mutation{{Key: physicalIndexKey(t, ghost, key),
		Cells: []backends.Cell{{Family: "ix", Qualifier: "k", Value: indextest.OrderKey("o2")}, {Family: "ix", Qualifier: "s", Value: []byte("v")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Exclusive(ctx, client.ExclusiveOptions{Fence: time.Millisecond}); !errors.Is(err, client.ErrFenced) {
		t.Fatalf("Exclusive while the dead holder's lease runs: %v, want ErrFenced", err)
	}
	y := exclusive(t, tbl, client.ExclusiveOptions{TakeOver: true})
	if err := y.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitRefresh()
	verifyExact(t, tbl)
	if err := x.Release(ctx); !errors.Is(err, client.ErrFenceLost) {
		t.Fatalf("the old holder's Release: %v, want ErrFenceLost", err)
	}
}

// physicalIndexKey is an entry key as the index table stores it (salted by the index's spec).
func physicalIndexKey(t *testing.T, ix *client.Index, key []byte) []byte {
	t.Helper()
	s := ix.Config().Salter
	pk, err := s.AppendPhysical(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

// TestExclusiveLeaseExpires: when a holder dies, its fence lapses with its lease: other handles write
// again (the indexes kept building, queries by them refused), and the next Exclusive, no take-over
// needed, repairs what the dead holder left and makes the indexes active and exact.
func TestExclusiveLeaseExpires(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	_, tbl := exclusiveOrders(t, b)
	x := exclusive(t, tbl, client.ExclusiveOptions{Lease: 200 * time.Millisecond})
	if _, err := x.Import(ctx, rowsOf([]client.ImportRow{orderRow("o1", "s1", "e1", 1), orderRow("o2", "s2", "e2", 2)}), client.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	x.Die()
	if err := tbl.Put(ctx, indextest.OrderKey("o3"), orderRow("o3", "s3", "e3", 3).Cells...); !errors.Is(err, client.ErrFenced) {
		t.Fatalf("a write within the dead holder's lease: %v, want ErrFenced", err)
	}
	time.Sleep(200*time.Millisecond + waitFor())
	if err := tbl.Put(ctx, indextest.OrderKey("o3"), orderRow("o3", "s3", "e3", 3).Cells...); err != nil {
		t.Fatalf("a write once the lease ran out: %v", err)
	}
	if _, err := testkit.CountErr(indextest.Index(t, tbl, "by_seller").Scan(ctx, client.Range{})); !errors.Is(err, client.ErrIndexBuilding) {
		t.Fatalf("a query once the lease ran out: %v, want ErrIndexBuilding until a repair", err)
	}
	y := exclusive(t, tbl, client.ExclusiveOptions{})
	if err := y.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitRefresh()
	verifyExact(t, tbl)
}

func waitFor() time.Duration { return 3 * exclusiveRefresh }

// TestExclusiveAddIndexAndRebuild: under the fence, AddIndex builds a new index and Rebuild repairs a
// damaged one (an entry gone, an entry no row backs), both as plain batches; after Release both are
// exact and answer queries. A unique index over shared values fails with ErrUniqueViolation.
func TestExclusiveAddIndexAndRebuild(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c, tbl := exclusiveOrders(t, b)
	var rows []client.ImportRow
	for i := range 200 {
		rows = append(rows, orderRow(fmt.Sprint("o", i), fmt.Sprint("s", i%5), fmt.Sprint("e", i), uint64(i)))
	}
	if _, err := tbl.Import(ctx, rowsOf(rows), client.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// Damage by_seller around the API: one entry deleted, one entry for a row that does not exist.
	bySeller := indextest.Index(t, tbl, "by_seller")
	gone, _, err := bySeller.EntryKey(indextest.OrderKey("o3"), rows[3].Cells)
	if err != nil {
		t.Fatal(err)
	}
	ghost, _, err := bySeller.EntryKey(indextest.OrderKey("nobody"), rows[4].Cells)
	if err != nil {
		t.Fatal(err)
	}
	ixTable := client.IndexTableName("orders", "by_seller")
	if _, err := b.Apply(ctx, ixTable, []backends.Mutation{
		{Key: physicalIndexKey(t, bySeller, gone), Delete: true},
		{Key: physicalIndexKey(t, bySeller, ghost), Cells: []backends.Cell{{Family: "ix", Qualifier: "k", Value: indextest.OrderKey("nobody")}, {Family: "ix", Qualifier: "s", Value: []byte("v")}}},
	}); err != nil {
		t.Fatal(err)
	}
	x := exclusive(t, tbl, client.ExclusiveOptions{})
	byAmount := client.IndexConfig{Name: "by_amount", Salter: testkit.Salter(t, "hash:2"), Parts: []client.IndexPart{client.ColumnPart("d", "amount")}}
	if rep, err := x.AddIndex(ctx, byAmount, nil); err != nil || rep.Rows != 200 {
		t.Fatalf("AddIndex under the fence: %+v, %v", rep, err)
	}
	if rep, err := bySeller.Verify(ctx); err != nil || rep.Missing != 1 || rep.Extra != 1 {
		t.Fatalf("the damage: %+v, %v", rep, err)
	}
	if _, err := x.Rebuild(ctx, "by_seller", nil); err != nil {
		t.Fatalf("Rebuild under the fence: %v", err)
	}
	if rep, err := bySeller.Verify(ctx); err != nil || rep.Problems() != 0 {
		t.Fatalf("after Rebuild: %+v, %v", rep, err)
	}
	sharedUnique := client.IndexConfig{Name: "by_seller_u", Salter: testkit.Salter(t, "hash:2"), Unique: true, Parts: []client.IndexPart{client.ColumnPart("d", "seller")}}
	if _, err := x.AddIndex(ctx, sharedUnique, nil); !errors.Is(err, client.ErrUniqueViolation) {
		t.Fatalf("a unique index over shared values: %v, want ErrUniqueViolation", err)
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.DropIndex(ctx, "orders", "by_seller_u", client.DropIndexOptions{Fence: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if tbl, err = c.OpenTable(ctx, "orders", nil); err != nil { // with the indexes there are now
		t.Fatal(err)
	}
	verifyExact(t, tbl)
	p, err := indextest.Index(t, tbl, "by_amount").Prefix([]byte("o42"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := testkit.CountErr(indextest.Index(t, tbl, "by_amount").Scan(ctx, client.PrefixRange(p))); err != nil || n != 1 {
		t.Fatalf("by the new index: %d rows, %v", n, err)
	}
}

// TestExclusiveWritersDuringFence: writers on another handle run before, during and after an
// exclusive import. Each of their writes under the fence is refused with ErrFenced before anything
// is sent; every write acknowledged is there after, none refused is, and the indexes are exact.
func TestExclusiveWritersDuringFence(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	_, tbl := exclusiveOrders(t, b)
	other, err := client.New(b, client.WithRouteRefresh(exclusiveRefresh)).OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		key    string
		seller string
		acked  bool
	}
	results := make([][]outcome, 3) // each writer's own
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range results {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				no, seller := fmt.Sprintf("w%d-%d", g, n), fmt.Sprint("s", n%4)
				err := other.Put(ctx, indextest.OrderKey(no), orderRow(no, seller, "x"+no, uint64(n)).Cells...)
				switch {
				case err == nil:
					results[g] = append(results[g], outcome{no, seller, true})
				case errors.Is(err, client.ErrFenced):
					results[g] = append(results[g], outcome{no, seller, false})
					time.Sleep(time.Millisecond) // a writer backs off
				default:
					t.Errorf("writer %d: %v", g, err)
					return
				}
			}
		})
	}
	time.Sleep(2 * exclusiveRefresh)
	x := exclusive(t, tbl, client.ExclusiveOptions{})
	var rows []client.ImportRow
	for i := range 500 {
		rows = append(rows, orderRow(fmt.Sprint("o", i), fmt.Sprint("s", i%6), fmt.Sprint("e", i), uint64(i)))
	}
	if _, err := x.Import(ctx, rowsOf(rows), client.ImportOptions{BatchRows: 20}); err != nil {
		t.Fatal(err)
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * exclusiveRefresh)
	close(stop)
	wg.Wait()
	var acked, refused int
	for _, o := range slices.Concat(results...) {
		row, err := tbl.Get(ctx, indextest.OrderKey(o.key))
		switch {
		case o.acked && (err != nil || string(cellValue(row, "seller")) != o.seller):
			t.Errorf("acknowledged %s: %v %v", o.key, row, err)
		case !o.acked && !errors.Is(err, client.ErrNotFound):
			t.Errorf("refused %s is there: %v", o.key, err)
		}
		if o.acked {
			acked++
		} else {
			refused++
		}
	}
	if acked == 0 || refused == 0 {
		t.Fatalf("%d writes acknowledged, %d refused: the writers did not run across the fence", acked, refused)
	}
	verifyExact(t, tbl)
}
