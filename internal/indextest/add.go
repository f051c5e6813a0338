package indextest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// liveRows is how many rows the add and drop cases write: o0 ... o19.
const liveRows = 20

// liveClient is a client whose handles read index definitions again every 50 ms, so that the fences
// of AddIndex and DropIndex (three of these) keep the cases short.
func liveClient(b backends.Backend) *client.Client {
	return client.New(b, client.WithConcurrency(4), client.WithRouteRefresh(50*time.Millisecond),
		client.WithLogger(slog.New(slog.DiscardHandler)))
}

// newPlainOrders creates the order table without indexes, with every row written through a plain
// handle, and drops it (with any index tables) when the test ends.
func newPlainOrders(t *testing.T, c *client.Client, name string) {
	t.Helper()
	ctx := t.Context()
	plain, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteTable(context.Background(), name) })
	for i := range liveRows {
		o := order{no: fmt.Sprint("o", i), seller: fmt.Sprint("host", i%3), buyer: fmt.Sprint("b", i%4), ext: fmt.Sprint("x", i), amount: fmt.Sprint(i)}
		if err := plain.Put(ctx, OrderKey(o.no), o.cells(uint64(i))...); err != nil {
			t.Fatal(err)
		}
	}
}

// liveWrite is one write of the writers that run while an index is added or dropped: a put, a row
// delete, a CheckAndMutate or an Increment of one of the rows. Each row keeps its own unique id (ext),
// so a unique index can be built over them whatever the writers do.
func liveWrite(ctx context.Context, tbl *client.Table, rng *rand.Rand) error {
	n := rng.IntN(liveRows)
	key := OrderKey(fmt.Sprint("o", n))
	cells := []client.Cell{
		{Family: "d", Qualifier: "seller", Value: []byte(fmt.Sprint("host", rng.IntN(4)))},
		{Family: "d", Qualifier: "buyer", Value: []byte(fmt.Sprint("b", rng.IntN(3)))},
		{Family: "d", Qualifier: "ext", Value: []byte(fmt.Sprint("x", n))},
		{Family: "d", Qualifier: "amount", Value: []byte(fmt.Sprint(rng.IntN(5)))},
	}
	switch rng.IntN(8) {
	case 0:
		return tbl.Delete(ctx, key)
	case 1, 2:
		cond := client.Condition{Family: "d", Qualifier: "amount", Value: []byte(fmt.Sprint(rng.IntN(5)))}
		_, err := tbl.CheckAndMutate(ctx, cond, client.Mutation{Key: key, Cells: cells[:2]})
		return err
	case 3:
		_, err := tbl.Increment(ctx, key, client.Increment{Family: "d", Qualifier: "hits", Delta: 1})
		return err
	default:
		return tbl.Put(ctx, key, cells...)
	}
}

// runWriters starts writers of tbl; the function returned stops them and returns how many writes
// succeeded and the first unexpected error. A writer stops between two writes, never in the middle
// of one: a write whose context is canceled may still land on the server after the client gave up
// (its RPCs queued there), after the check that follows the stop had repaired the index with grace
// 0, and leave a row without its entry. Dying writers are the SIGKILL tests' subject, not these.
func runWriters(tbl *client.Table, writers int) (stop func() (int64, error)) {
	var (
		stopping atomic.Bool
		wg       sync.WaitGroup
		ok       atomic.Int64
		mu       sync.Mutex
		first    error
	)
	ctx := context.Background()
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for !stopping.Load() {
				err := liveWrite(ctx, tbl, rng)
				switch {
				case err == nil:
					ok.Add(1)
				case !client.IsRetryable(err):
					mu.Lock()
					first = cmpFirst(first, err)
					mu.Unlock()
				}
			}
		})
	}
	return func() (int64, error) {
		stopping.Store(true)
		wg.Wait()
		return ok.Load(), first
	}
}

func cmpFirst(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// refused checks that a query by the named index on a handle opened now fails with want.
func refused(c *client.Client, table, index string, want error) error {
	tbl, err := c.OpenTable(context.Background(), table, nil)
	if err != nil {
		return err
	}
	ix, err := tbl.Index(index)
	if err != nil {
		return err
	}
	for _, err := range ix.Scan(context.Background(), client.Range{}) {
		if !errors.Is(err, want) {
			return fmt.Errorf("query by index %s: %v, want %v", index, err, want)
		}
		return nil
	}
	return fmt.Errorf("query by index %s answered, want %v", index, want)
}

// AddLive adds the order indexes to a table in use, while writers put, delete, check-and-mutate and
// increment through one Table opened before the first: its handle learns of each index within the
// refresh interval and keeps it, the first one too (which needs NoPlainWriters: no drop-in or raw
// writer). Queries by an index are refused while it is built; afterwards every index answers what the
// main table says and verifies clean.
func AddLive(t *testing.T, b backends.Backend, name string) {
	ctx := t.Context()
	c := liveClient(b)
	newPlainOrders(t, c, name)
	idx := OrderIndexes(t)
	if _, err := c.AddIndex(ctx, name, idx[0], client.AddIndexOptions{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("first index without NoPlainWriters: %v, want ErrInvalidArgument", err)
	}
	tbl, err := c.OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Indexes()); n != 0 {
		t.Fatalf("the table has %d indexes before the first is added", n)
	}
	stop := runWriters(tbl, 4)
	rep, err := c.AddIndex(ctx, name, idx[0], client.AddIndexOptions{NoPlainWriters: true})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if rep.Rows == 0 || rep.Rows > liveRows {
		stop()
		t.Fatalf("first index built from %d rows, want 1 to %d (the writers delete rows)", rep.Rows, liveRows)
	}
	for _, cfg := range idx[1:] {
		var (
			once    sync.Once
			checked = errors.New("no query while the index was built")
		)
		opts := client.AddIndexOptions{Progress: func(client.RebuildProgress) {
			once.Do(func() { checked = refused(c, name, cfg.Name, client.ErrIndexBuilding) })
		}}
		_, err := c.AddIndex(ctx, name, cfg, opts)
		if err == nil {
			err = checked
		}
		if err != nil {
			stop()
			t.Fatal(err)
		}
	}
	writes, err := stop()
	if err != nil {
		t.Fatalf("writer: %v", err)
	}
	if writes == 0 {
		t.Fatal("no write succeeded while the indexes were added")
	}
	if got := len(tbl.Indexes()); got != len(idx) {
		t.Fatalf("the writers' handle has %d indexes, want %d", got, len(idx))
	}
	now, err := c.OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range now.Indexes() {
		if ix.State() != client.IndexActive {
			t.Fatalf("index %s is %s, want active", ix.Name(), ix.State())
		}
	}
	AssertIndexes(t, now)
	// Added again, an active index is left as it is; another definition under its name is refused.
	if _, err := c.AddIndex(ctx, name, idx[1], client.AddIndexOptions{}); err != nil {
		t.Fatalf("AddIndex of an active index: %v", err)
	}
	other := idx[1]
	other.Unique = true
	if _, err := c.AddIndex(ctx, name, other, client.AddIndexOptions{}); !errors.Is(err, client.ErrIndexMismatch) {
		t.Fatalf("AddIndex of another definition: %v, want ErrIndexMismatch", err)
	}
}

// AddResume interrupts a build and runs AddIndex again: the index stays building, refused to queries,
// until the second call builds it.
func AddResume(t *testing.T, b backends.Backend, name string) {
	ctx := t.Context()
	c := liveClient(b)
	newPlainOrders(t, c, name)
	cfg := OrderIndexes(t)[0]
	stopCtx, cancel := context.WithCancel(ctx)
	_, err := c.AddIndex(stopCtx, name, cfg, client.AddIndexOptions{NoPlainWriters: true, Progress: func(client.RebuildProgress) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted AddIndex: %v, want context.Canceled", err)
	}
	if err := refused(c, name, cfg.Name, client.ErrIndexBuilding); err != nil {
		t.Fatal(err)
	}
	if tbl, err := c.OpenTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	} else if ix, err := tbl.Index(cfg.Name); err != nil || ix.State() != client.IndexBuilding {
		t.Fatalf("index %s of a table opened while it is declared: %v, %v; want it building", cfg.Name, ix, err)
	}
	if _, err := c.AddIndex(ctx, name, cfg, client.AddIndexOptions{}); err != nil {
		t.Fatalf("resumed AddIndex: %v", err)
	}
	tbl, err := c.OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ix := Index(t, tbl, cfg.Name); ix.State() != client.IndexActive {
		t.Fatalf("after the resumed build: %v", ix)
	}
	AssertIndexes(t, tbl)
}

// DropLive drops the order indexes one by one while writers run: each goes from the table's meta and
// its table from the store, queries by it fail with ErrIndexNotFound, and the ones left still answer
// what the main table says. With the last gone the table opens as a plain one again.
func DropLive(t *testing.T, b backends.Backend, name string) {
	ctx := t.Context()
	c := liveClient(b)
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteTable(context.Background(), name) })
	stop := runWriters(tbl, 4)
	for _, cfg := range OrderIndexes(t) {
		before := Index(t, tbl, cfg.Name)
		if err := c.DropIndex(ctx, name, cfg.Name, client.DropIndexOptions{}); err != nil {
			stop()
			t.Fatal(err)
		}
		for _, err := range before.Scan(ctx, client.Range{}) {
			if !errors.Is(err, client.ErrIndexNotFound) {
				stop()
				t.Fatalf("query by dropped index %s: %v, want ErrIndexNotFound", cfg.Name, err)
			}
			break
		}
		meta, err := b.TableMeta(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for k := range maps.Keys(meta) {
			if strings.HasSuffix(k, "."+cfg.Name) {
				t.Fatalf("meta key %q left after the drop of %s", k, cfg.Name)
			}
		}
		if _, err := b.TableMeta(ctx, client.IndexTableName(name, cfg.Name)); !errors.Is(err, backends.ErrTableNotFound) {
			t.Fatalf("index table of %s after the drop: %v, want ErrTableNotFound", cfg.Name, err)
		}
		if err := c.DropIndex(ctx, name, cfg.Name, client.DropIndexOptions{}); !errors.Is(err, client.ErrIndexNotFound) {
			t.Fatalf("second DropIndex of %s: %v, want ErrIndexNotFound", cfg.Name, err)
		}
		if len(tbl.Indexes()) > 0 {
			stop()
			AssertIndexes(t, tbl)
			stop = runWriters(tbl, 4)
		}
	}
	if _, err := stop(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	if _, err := c.OpenTable(ctx, name, nil); err != nil {
		t.Fatalf("OpenTable with every index dropped: %v", err)
	}
}
