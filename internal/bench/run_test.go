package bench

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
)

// recorder remembers the tables a run creates and deletes, and can fail every Read.
type recorder struct {
	backends.Backend
	failRead error

	mu               sync.Mutex
	created, deleted []string
}

func (r *recorder) CreateTable(ctx context.Context, table string, opts backends.TableOptions) error {
	err := r.Backend.CreateTable(ctx, table, opts)
	if err == nil {
		r.mu.Lock()
		r.created = append(r.created, table)
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) DeleteTable(ctx context.Context, table string) error {
	err := r.Backend.DeleteTable(ctx, table)
	if err == nil {
		r.mu.Lock()
		r.deleted = append(r.deleted, table)
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if r.failRead != nil {
		return nil, r.failRead
	}
	return r.Backend.Read(ctx, table, keys, opts)
}

func (r *recorder) Regions(ctx context.Context, table string) ([][]byte, error) {
	return r.Backend.(backends.RegionLister).Regions(ctx, table)
}

func smallConfig() Config {
	c := DefaultConfig()
	c.Rows = 2000
	c.NaiveRows = 50
	c.Gets = 50
	c.Repeat = 2
	c.TuneRows = 300
	c.ScanRows = 1500
	c.ScanBuckets = []int{1, 8}
	c.FirstRows = 3 // the sampling's shape is under test, not its precision
	c.LimitBuckets = 32
	c.LimitPrefetch = []int{0, 1}
	c.RawConcurrency = []int{2, 8}
	c.Settle = 0 // the machine runs other tests
	return c
}

// checkCleanedUp: every table the run created is gone, and every one was named TablePrefix..., but
// the rebucket directory, whose name is the client's.
func checkCleanedUp(t *testing.T, rec *recorder) {
	t.Helper()
	if len(rec.created) == 0 {
		t.Fatal("no table created")
	}
	for _, name := range rec.created {
		if !strings.HasPrefix(name, TablePrefix) && name != client.DirTable {
			t.Errorf("table %q lacks the %q prefix", name, TablePrefix)
		}
		if name == client.DirTable && !slices.Contains(rec.deleted, name) {
			checkDirLeftToOthers(t, rec.Backend)
			continue
		}
		if !slices.Contains(rec.deleted, name) {
			t.Errorf("table %q not deleted", name)
		}
		if _, err := rec.Backend.TableMeta(context.Background(), name); !errors.Is(err, backends.ErrTableNotFound) {
			t.Errorf("table %q still there: %v", name, err)
		}
	}
}

// checkDirLeftToOthers: the run created the rebucket directory but did not delete it, which it does
// only when another program's rebucket has put a row in it meanwhile (on a shared HBase, the
// integration tests run beside the bench). The directory may then be there or gone, but no row in it
// is the run's own.
func checkDirLeftToOthers(t *testing.T, b backends.Backend) {
	t.Helper()
	for row, err := range b.Scan(context.Background(), client.DirTable, backends.Range{}, backends.ScanOptions{}) {
		if errors.Is(err, backends.ErrTableNotFound) {
			return
		}
		if err != nil {
			t.Errorf("scan %s: %v", client.DirTable, err)
			return
		}
		if strings.HasPrefix(string(row.Key), TablePrefix) {
			t.Errorf("%s still holds the run's row %q", client.DirTable, row.Key)
		}
	}
}

// TestRunMemory runs every section end to end on the embedded memory store, where the baseline is the
// same driver called directly. Its timings mean nothing; its counts, checks and cleanup do.
func TestRunMemory(t *testing.T) {
	// IgnoreCurrent: with -tags integration the HBase tests ran first, and this pinned gohbase leaves
	// its admin client's goroutines behind for the life of the process (its Close panics).
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	rec := &recorder{Backend: memory.New()}
	st := BackendStore("memory://", rec)
	cfg := smallConfig()
	rep, err := Run(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCleanedUp(t, rec)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// 2 write tables, scan tables for 1 and 8 buckets, the 32-bucket limit table, 3 order tables and
	// their 0+1+2 index tables, the hand-written application's 2 tables, per repeat a rebucketed
	// table, its new table and an import table, the rebucket directory, the verify section's 2
	// tables, the filter table, per repeat the exclusive measures' 3 tables with their 4 index
	// tables, and the copy section's source with, per repeat, an import table, a copy and its
	// checkpoint (the embedded store's tables are another store's); the sync section's 2 tables (its
	// syncs make no checkpoint: their changes fit in one batch); the shards section's source and,
	// per repeat, the one process's target and checkpoint and the shards' target and 2 checkpoints.
	if want := 21 + 18*cfg.Repeat; len(rec.created) != want {
		t.Errorf("created %v, want %d tables", rec.created, want)
	}
	checkIndex(t, rep.Index, cfg)
	checkRebucket(t, rep.Rebucket, cfg)
	if c := rep.Copy; c == nil || c.CopyRowsPerS <= 0 || c.ImportRowsPerS <= 0 || c.LocalCopyRowsPerS <= 0 || c.LocalImportRowsPerS <= 0 {
		t.Errorf("copy section: %+v, want every rate measured", c)
	}
	checkFilter(t, rep.Filter, cfg, -1)
	checkSync(t, rep.Sync, cfg)
	checkShards(t, rep.Shards, cfg, "shared")
	if v := rep.Verify; v == nil || v.Rows != cfg.bulkRows() || v.VerifyMs <= 0 || v.ScanBothMs <= 0 {
		t.Errorf("verify: %+v", v)
	}

	sp := rep.Spread
	if sp == nil || sp.Regions != 16 || sp.UnsaltedMaxShare != 1 || sp.Unsalted[0] != int64(cfg.Rows) {
		t.Fatalf("spread: %+v", sp)
	}
	var total int64
	for _, c := range sp.Salted {
		total += c
		if c == 0 {
			t.Errorf("an empty salted region: %v", sp.Salted)
		}
	}
	if total != int64(cfg.Rows) {
		t.Errorf("salted table holds %d rows, want %d", total, cfg.Rows)
	}

	w := rep.Write
	if w == nil || w.NaiveRowsPerS <= 0 || w.RawRowsPerS <= 0 || w.BrineRowsPerS <= 0 || w.BrineBatches == 0 ||
		!slices.Contains(cfg.RawConcurrency, w.RawConcurrency) || len(rep.Tuning) != len(cfg.RawConcurrency) {
		t.Errorf("write: %+v, tuning %+v", w, rep.Tuning)
	}

	if len(rep.Scans) != 2 {
		t.Fatalf("scans: %+v", rep.Scans)
	}
	for i, s := range rep.Scans {
		if s.Buckets != cfg.ScanBuckets[i] || s.Rows != int64(cfg.ScanRows) || s.RawRowsPerS <= 0 || s.BrineRowsPerS <= 0 || s.Ratio <= 0 {
			t.Errorf("scan %d: %+v", i, s)
		}
	}

	g := rep.Get
	if g == nil || g.Gets != cfg.Gets || g.BackendReadsPerGet != 1 || g.BackendKeysPerGet != 1 || g.DriverRPCsPerGet != -1 {
		t.Errorf("get: %+v", g)
	}

	if len(rep.Limits) != len(cfg.Limits)*len(cfg.LimitPrefetch) {
		t.Fatalf("limits: %+v", rep.Limits)
	}
	for _, l := range rep.Limits {
		if l.Returned != l.Limit || l.ServerRows != -1 || l.BackendRows < int64(l.Limit) || l.Bound != 2*l.Limit+32 {
			t.Errorf("limit: %+v", l)
		}
		if l.BackendRows > int64(l.Bound) {
			t.Errorf("prefetch %d, limit %d: backend yielded %d rows, over the bound %d", l.Prefetch, l.Limit, l.BackendRows, l.Bound)
		}
		// With no read-ahead, a bucket yields at most what the merge took from it plus the one row
		// it is blocked on: limit + buckets rows in all.
		if l.Prefetch == 1 && l.BackendRows > int64(l.Limit+l.Buckets) {
			t.Errorf("prefetch 1, limit %d: backend yielded %d rows", l.Limit, l.BackendRows)
		}
	}

	if len(rep.Goals) != len(Evaluate(rep)) || rep.Duration <= 0 {
		t.Errorf("goals %d, duration %v", len(rep.Goals), rep.Duration)
	}
	for _, name := range []string{"write spread, unsalted", "salted get RPCs"} {
		if g := goal(t, rep.Goals, name); !g.Met {
			t.Errorf("goal %q not met: %+v", name, g)
		}
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil || !strings.Contains(md.String(), "## 5. Scan with limit") ||
		!strings.Contains(md.String(), "## Indexes") || !strings.Contains(md.String(), "## Selective filter") {
		t.Errorf("markdown: %v\n%s", err, md.String())
	}
}

// checkIndex: every table got its rows, an order Put writes one row per table it touches (main, and
// one entry per index) and asks the store for more as indexes are added, and every query returned 20.
func checkIndex(t *testing.T, x *IndexResult, cfg Config) {
	t.Helper()
	if x == nil || x.Rows != min(cfg.Rows, indexRows) || x.Writers != indexWriters || len(x.Puts) != 3 ||
		x.QueryRows != min(indexQueryRows, x.Rows/indexSellers) || x.Queries != min(cfg.Gets, indexQueries) {
		t.Fatalf("index: %+v", x)
	}
	for k, p := range x.Puts {
		if p.Indexes != k || p.RowsPerS <= 0 || p.OverNoIndex <= 0 {
			t.Errorf("index puts %d: %+v", k, p)
		}
		// A new order: the main row and one entry per index, and never fewer calls than rows.
		if p.RowsPerPut < float64(1+k) || p.CallsPerPut < 1 {
			t.Errorf("%d indexes: %.2f rows and %.2f calls per Put", k, p.RowsPerPut, p.CallsPerPut)
		}
		if k > 0 && (p.RowsPerPut <= x.Puts[k-1].RowsPerPut || p.CallsPerPut <= x.Puts[k-1].CallsPerPut) {
			t.Errorf("%d indexes cost no more than %d: %+v vs %+v", k, k-1, p, x.Puts[k-1])
		}
	}
	if x.Puts[0].RowsPerPut != 1 || x.Puts[0].CallsPerPut != 1 {
		t.Errorf("a Put without index: %+v, want 1 call writing 1 row", x.Puts[0])
	}
	if x.CoveredP50us <= 0 || x.RowsP50us <= 0 || x.HandP50us <= 0 || x.CoveredOverHand <= 0 || x.RowsOverHand <= 0 {
		t.Errorf("index queries: %+v", x)
	}
	im := x.Import
	if im == nil || im.Rows != cfg.bulkRows() || im.PlainRowsPerS <= 0 || im.IndexRowsPerS <= 0 ||
		im.IndexOverPlain <= 0 || im.IndexOverBaseline != im.IndexRowsPerS/IndexImportBaseline || im.CallsPerRow <= 0 {
		t.Errorf("indexed import: %+v", im)
	}
	if e := x.Exclusive; e == nil || e.Rows != cfg.bulkRows() || e.PlainRowsPerS <= 0 || e.ImportRowsPerS <= 0 || e.BuildRowsPerS <= 0 ||
		e.ImportOverPlain != Ratio(e.ImportRowsPerS, e.PlainRowsPerS) || e.ExclusiveOverProto <= 0 {
		t.Errorf("exclusive: %+v", e)
	}
}

// checkSync: 1% of the rows planted, of every kind alike, and both calls timed (Run has checked
// that the verify found exactly them and the sync repaired them all).
func checkSync(t *testing.T, s *SyncResult, cfg Config) {
	t.Helper()
	n := cfg.bulkRows()
	if s == nil || s.Rows != n || s.Differences != n/syncShare || s.Changed+s.Missing+s.Extra+s.DeletedColumn != s.Differences ||
		s.Changed != s.Missing || s.Extra != s.DeletedColumn || s.VerifyMs <= 0 || s.SyncMs <= 0 || s.VerifyRowsPerS <= 0 ||
		s.SyncOverVerify != Ratio(s.SyncMs, s.VerifyMs) {
		t.Errorf("sync: %+v", s)
	}
}

// checkShards: both copies timed, over the connections expected.
func checkShards(t *testing.T, s *ShardsResult, cfg Config, conns string) {
	t.Helper()
	if s == nil || s.Rows != cfg.bulkRows() || s.Shards != shardCount || s.Connections != conns || s.OneMs <= 0 || s.ShardedMs <= 0 ||
		s.OneCopyRowsPerS <= 0 || s.ShardedCopyRowsPerS <= 0 || s.ShardedOverOne != Ratio(s.ShardedRowsPerS, s.OneRowsPerS) {
		t.Errorf("shards: %+v", s)
	}
}

// checkRebucket: each repeat copied every row (Run fails otherwise), and both rates are figures.
func checkRebucket(t *testing.T, b *RebucketResult, cfg Config) {
	t.Helper()
	if b == nil || b.Rows != cfg.bulkRows() || b.From != rebucketFrom || b.To != rebucketTo || b.CopyRowsPerS <= 0 ||
		b.ImportRowsPerS <= 0 || b.CopyOverImport != b.CopyRowsPerS/b.ImportRowsPerS || b.CallsPerRow <= 0 {
		t.Errorf("rebucket: %+v", b)
	}
}

// checkFilter: both reads covered the same rows and returned the 1% matching; the filtered one had
// the backend yield only those, the client-side one every row. server is the rows a store that counts
// them must have sent for the client-side read (-1: not observable).
func checkFilter(t *testing.T, f *FilterResult, cfg Config, server int64) {
	t.Helper()
	n := min(cfg.Rows, filterRows)
	if f == nil || f.Rows != n || f.Buckets != 8 || f.Matching != n/filterEvery || f.FilteredRowsPerS <= 0 || f.ClientRowsPerS <= 0 || f.TimeRatio <= 0 {
		t.Fatalf("filter: %+v", f)
	}
	if f.FilteredBackendRows != int64(f.Matching) || f.ClientBackendRows != int64(n) {
		t.Errorf("filter: backend yielded %d rows filtered, %d client-side; want %d and %d", f.FilteredBackendRows, f.ClientBackendRows, f.Matching, n)
	}
	if server < 0 && (f.FilteredServerRows != -1 || f.ClientServerRows != -1) {
		t.Errorf("filter: server rows %d and %d on a store that cannot count them", f.FilteredServerRows, f.ClientServerRows)
	}
	if server >= 0 && (f.FilteredServerRows != int64(f.Matching) || f.ClientServerRows != server) {
		t.Errorf("filter: server sent %d rows filtered, %d client-side; want %d and %d", f.FilteredServerRows, f.ClientServerRows, f.Matching, server)
	}
}

func TestRunSections(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rec := &recorder{Backend: memory.New()}
	cfg := smallConfig()
	cfg.Sections = []string{SectionLimit}
	rep, err := Run(context.Background(), BackendStore("memory://", rec), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Write != nil || rep.Spread != nil || rep.Get != nil || rep.Scans != nil || len(rep.Limits) == 0 {
		t.Errorf("ran more or less than the limit section: %+v", rep)
	}
	// Write tables (loaded untimed) and the limit table only.
	if len(rec.created) != 3 {
		t.Errorf("created %v", rec.created)
	}
	checkCleanedUp(t, rec)
}

func TestRunFailureCleansUp(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	boom := errors.New("boom")
	rec := &recorder{Backend: memory.New(), failRead: boom}
	_, err := Run(context.Background(), BackendStore("memory://", rec), smallConfig())
	if !errors.Is(err, boom) {
		t.Fatalf("Run: %v, want boom", err)
	}
	checkCleanedUp(t, rec)
}

func TestRunRefusesBadInput(t *testing.T) {
	rec := &recorder{Backend: memory.New()}
	bad := smallConfig()
	bad.Rows = 0
	if _, err := Run(context.Background(), BackendStore("memory://", rec), bad); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("bad config: %v", err)
	}
	if _, err := Run(context.Background(), &Store{Backend: rec}, smallConfig()); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("store without raw driver: %v", err)
	}
	if len(rec.created) != 0 {
		t.Errorf("tables created before the input was checked: %v", rec.created)
	}
}

// conn is another connection to a store held in this process: closing it leaves the store open.
type conn struct {
	backends.Backend
	closed *atomic.Int32
}

func (c conn) Close() error {
	c.closed.Add(1)
	return nil
}

// TestRunSyncShards runs the sync and shards sections alone on both embedded stores, and once with
// connections of their own for the shards: every planted difference found and repaired (Run checks
// it), each connection closed, every table deleted.
func TestRunSyncShards(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name    string
		open    func(t *testing.T) backends.Backend
		connect bool
	}{
		{"memory", func(*testing.T) backends.Backend { return memory.New() }, false},
		{"memory, connections", func(*testing.T) backends.Backend { return memory.New() }, true},
		{"local", func(t *testing.T) backends.Backend {
			b, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "db"), NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{Backend: tt.open(t)}
			st := BackendStore("test://", rec)
			var opened, closed atomic.Int32
			if tt.connect {
				st.Connect = func(context.Context) (backends.Backend, error) {
					opened.Add(1)
					return conn{rec, &closed}, nil
				}
			}
			cfg := smallConfig()
			cfg.Sections = []string{SectionSync, SectionShards}
			cfg.BulkRows = 1000
			rep, err := Run(context.Background(), st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkCleanedUp(t, rec)
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			checkSync(t, rep.Sync, cfg)
			conns := "shared"
			if tt.connect {
				conns = "separate"
			}
			checkShards(t, rep.Shards, cfg, conns)
			if tt.connect && (opened.Load() != shardCount || closed.Load() != shardCount) {
				t.Errorf("opened %d connections and closed %d, want %d each", opened.Load(), closed.Load(), shardCount)
			}
			if g := goal(t, rep.Goals, "sync of a 1% difference"); g.Want != "<= 1.5x verify's time" {
				t.Errorf("sync goal: %+v", g)
			}
			var md bytes.Buffer
			if err := rep.Markdown(&md); err != nil || !strings.Contains(md.String(), "## Sync: two tables of 1000 rows") ||
				!strings.Contains(md.String(), "## Shards: a copy of 1000 rows") {
				t.Errorf("markdown: %v\n%s", err, md.String())
			}
		})
	}
}

// TestPlan: 1 row in syncShare differs, of each kind in turn, the same rows for the same seed, and
// the verify is told one distinct key per row.
func TestPlan(t *testing.T) {
	tests := []struct {
		n, want int
	}{{20000, 200}, {1000, 10}, {100, plantKinds}, {3, 3}}
	for _, tt := range tests {
		p := newPlan(tt.n, 1)
		if len(p.rows) != tt.want || !slices.IsSorted(p.rows) || len(p.want()) != tt.want {
			t.Errorf("n %d: %d rows planted (sorted %v), %d keys; want %d", tt.n, len(p.rows), slices.IsSorted(p.rows), len(p.want()), tt.want)
		}
		if q := newPlan(tt.n, 1); !slices.Equal(p.rows, q.rows) {
			t.Errorf("n %d: two plans of one seed differ", tt.n)
		}
		src, dst := p.mutations(100, []byte("value"))
		if got := p.count(plantExtra); len(src) != len(p.rows)-got || len(dst) != len(p.rows) {
			t.Errorf("n %d: %d source and %d target mutations for %d rows, %d extra", tt.n, len(src), len(dst), len(p.rows), got)
		}
	}
}
