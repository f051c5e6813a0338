package reliability_test

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// Soak bounds. The row cap keeps a long soak's file and heap bounded: past it, writers overwrite rows
// they wrote before instead of adding new ones.
const (
	soakWriters  = 3
	soakScanners = 2
	soakRowCap   = 1_500_000
	soakBatch    = 50
	// soakHeapLimit bounds the live heap, generously: the data lives in bbolt's memory map, not the
	// heap; what the heap holds is bounded by batches in flight and buckets × prefetch rows per scan.
	soakHeapLimit = 256 << 20
)

func soakDuration(t *testing.T) time.Duration {
	s := os.Getenv("BRINE_SOAK")
	if s == "" {
		if testing.Short() {
			return time.Second
		}
		return 3 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("BRINE_SOAK=%q: want a duration such as 10m", s)
	}
	return d
}

func soakKey(w int, i int64) []byte { return fmt.Appendf(nil, "w%d/%09d", w, i) }

// soakValue is 64 bytes derived from the key and a generation, so overwrites change the value.
func soakValue(k []byte, gen int64) []byte {
	v := fmt.Appendf(nil, "%s#%d#", k, gen)
	for len(v) < 64 {
		v = append(v, '.')
	}
	return v
}

// memPeak samples the heap while the soak runs: the live heap (as of the last GC, what the program
// holds) and the heap in use (live plus garbage not yet collected, what the process pays for).
type memPeak struct {
	live, inUse atomic.Uint64
	stop        chan struct{}
	done        sync.WaitGroup
}

func watchMemory(every time.Duration) *memPeak {
	p := &memPeak{stop: make(chan struct{})}
	p.done.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(samples) // no stop-the-world, unlike runtime.ReadMemStats
			if v := samples[0].Value.Uint64(); v > p.live.Load() {
				p.live.Store(v)
			}
			if v := samples[1].Value.Uint64(); v > p.inUse.Load() {
				p.inUse.Store(v)
			}
			select {
			case <-tick.C:
			case <-p.stop:
				return
			}
		}
	})
	return p
}

func (p *memPeak) finish() (live, inUse uint64) {
	close(p.stop)
	p.done.Wait()
	return p.live.Load(), p.inUse.Load()
}

// vmHWM is the process's peak resident set in bytes (0 where /proc is not there).
func vmHWM() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestSoak runs concurrent writers (Apply, Put and Import) and readers (forward and reverse prefix
// scans with and without limits, GetMany, CountByBucket) through ONE client on the local bbolt store
// for a bounded time (BRINE_SOAK, default 3 s). Readers check what they can know under concurrent
// writes: order, no duplicates, the right values, and every row committed before the read began. At
// the end the row count must match what the writers committed, and the heap must have stayed bounded.
func TestSoak(t *testing.T) {
	dur := soakDuration(t)
	ctx := context.Background()
	store, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "soak.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(store, client.WithPrefetch(64))
	defer c.Close()
	tbl, err := c.CreateTable(ctx, table, client.TableConfig{Salter: testkit.Salter(t, "hash:16")})
	if err != nil {
		t.Fatal(err)
	}

	mem := watchMemory(100 * time.Millisecond)
	deadline := time.Now().Add(dur)
	var (
		committed [soakWriters]atomic.Int64 // rows 0..n-1 of writer w are stored
		total     atomic.Int64
		ops       [6]atomic.Int64 // applies, puts, imports, scans, getmanys, counts
		rowsRead  atomic.Int64
		failOnce  sync.Once
		failure   error
		stop      atomic.Bool
	)
	fail := func(err error) {
		failOnce.Do(func() { failure = err })
		stop.Store(true)
	}
	running := func() bool { return !stop.Load() && time.Now().Before(deadline) }
	var wg sync.WaitGroup

	for w := range soakWriters {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for gen := int64(1); running(); gen++ {
				next := committed[w].Load()
				if total.Load() >= soakRowCap && next > 0 { // overwrite old rows: the table stops growing
					i := rng.Int64N(next)
					k := soakKey(w, i)
					if err := tbl.Put(ctx, k, client.Cell{Family: "d", Qualifier: "q", Value: soakValue(k, gen), Timestamp: testTS + gen}); err != nil {
						fail(fmt.Errorf("writer %d: overwrite: %w", w, err))
					}
					ops[1].Add(1)
					continue
				}
				muts := make([]client.Mutation, soakBatch)
				for j := range muts {
					k := soakKey(w, next+int64(j))
					muts[j] = client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: soakValue(k, 0), Timestamp: testTS}}}
				}
				switch gen % 10 {
				case 0: // the import engine, sharing the client with everything else
					stats, err := tbl.Import(ctx, slicesSeq(muts), client.ImportOptions{Workers: 2, BatchRows: 16})
					if err != nil || stats.Written != soakBatch {
						fail(fmt.Errorf("writer %d: import: %+v, %w", w, stats, err))
						return
					}
					ops[2].Add(1)
				case 1: // one row at a time
					for _, m := range muts {
						if err := tbl.Put(ctx, m.Key, m.Cells...); err != nil {
							fail(fmt.Errorf("writer %d: put: %w", w, err))
							return
						}
					}
					ops[1].Add(soakBatch)
				default:
					rowErrs, err := tbl.Apply(ctx, muts)
					if err != nil || rowErrs != nil {
						fail(fmt.Errorf("writer %d: apply: %v %w", w, firstErr(rowErrs), err))
						return
					}
					ops[0].Add(1)
				}
				committed[w].Add(soakBatch)
				total.Add(soakBatch)
			}
		})
	}

	for s := range soakScanners {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(s), 2))
			for running() {
				w := rng.IntN(soakWriters)
				before := committed[w].Load()
				switch rng.IntN(8) {
				case 0:
					ks := make([][]byte, 1+rng.IntN(200))
					for i := range ks {
						ks[i] = soakKey(w, rng.Int64N(max(1, before)))
					}
					rows, err := tbl.GetMany(ctx, ks)
					if err != nil {
						fail(fmt.Errorf("reader %d: get many: %w", s, err))
						return
					}
					for i, row := range rows {
						if before > 0 && (len(row.Cells) != 1 || !strings.HasPrefix(string(row.Cells[0].Value), string(ks[i])+"#")) {
							fail(fmt.Errorf("reader %d: get many: row %q = %+v", s, ks[i], row.Cells))
							return
						}
					}
					ops[4].Add(1)
				case 1:
					counts, err := tbl.CountByBucket(ctx)
					if err != nil {
						fail(fmt.Errorf("reader %d: count: %w", s, err))
						return
					}
					var sum int64
					for _, n := range counts {
						sum += n
					}
					if sum < before {
						fail(fmt.Errorf("reader %d: count %d, writer %d alone had %d rows", s, sum, w, before))
						return
					}
					ops[5].Add(1)
				default:
					n, err := soakScan(ctx, tbl, w, before, rng)
					if err != nil {
						fail(fmt.Errorf("reader %d: %w", s, err))
						return
					}
					rowsRead.Add(int64(n))
					ops[3].Add(1)
				}
			}
		})
	}
	wg.Wait()
	live, inUse := mem.finish()
	if failure != nil {
		t.Fatal(failure)
	}

	// Quiet now: the table holds exactly what the writers committed.
	var want int64
	for w := range soakWriters {
		want += committed[w].Load()
	}
	var got int64
	for _, err := range tbl.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		got++
	}
	counts, err := tbl.CountByBucket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var counted int64
	for _, n := range counts {
		counted += n
	}
	if got != want || counted != want {
		t.Fatalf("writers committed %d rows; a scan finds %d, CountByBucket %d", want, got, counted)
	}
	t.Logf("soak %v on local: %d rows (%d applies, %d puts, %d imports); %d scans reading %d rows, %d GetMany, %d counts",
		dur, want, ops[0].Load(), ops[1].Load(), ops[2].Load(), ops[3].Load(), rowsRead.Load(), ops[4].Load(), ops[5].Load())
	t.Logf("peak live heap %.1f MiB, peak heap objects %.1f MiB, peak RSS (VmHWM) %.1f MiB, goroutines now %d",
		float64(live)/(1<<20), float64(inUse)/(1<<20), float64(vmHWM())/(1<<20), runtime.NumGoroutine())
	if live > soakHeapLimit {
		t.Fatalf("peak live heap %d MiB over the %d MiB bound", live>>20, soakHeapLimit>>20)
	}
}

// soakScan scans writer w's rows in a random direction, with or without a limit, and checks them
// against what w had committed before the scan began.
func soakScan(ctx context.Context, tbl *client.Table, w int, before int64, rng *rand.Rand) (int, error) {
	reverse := rng.IntN(2) == 0
	limit := 0
	if rng.IntN(3) == 0 {
		limit = 1 + rng.IntN(500)
	}
	opts := []client.ReadOption{client.Limit(limit)}
	if reverse {
		opts = append(opts, client.Reverse())
	}
	prefix := fmt.Appendf(nil, "w%d/", w)
	var idx []int64
	for row, err := range tbl.Scan(ctx, client.PrefixRange(prefix), opts...) {
		if err != nil {
			return len(idx), fmt.Errorf("scan: %w", err)
		}
		i, perr := strconv.ParseInt(strings.TrimPrefix(string(row.Key), string(prefix)), 10, 64)
		if perr != nil || !slices.Equal(row.Key, soakKey(w, i)) {
			return len(idx), fmt.Errorf("scan of %s: foreign row %q", prefix, row.Key)
		}
		if len(row.Cells) != 1 || !strings.HasPrefix(string(row.Cells[0].Value), string(row.Key)+"#") {
			return len(idx), fmt.Errorf("scan: row %q has cells %+v", row.Key, row.Cells)
		}
		if n := len(idx); n > 0 && (!reverse && idx[n-1] >= i || reverse && idx[n-1] <= i) {
			return len(idx), fmt.Errorf("scan reverse=%v: row %d after row %d", reverse, i, idx[n-1])
		}
		idx = append(idx, i)
	}
	// Rows 0..before-1 were committed before the scan: all of them must be there (the ones a limit
	// lets through, forward; reverse, rows written meanwhile may come first).
	var low int64
	for _, i := range idx {
		if i < before {
			low++
		}
	}
	switch {
	case limit == 0 && low != before:
		return len(idx), fmt.Errorf("scan reverse=%v: %d of the %d committed rows of %s", reverse, low, before, prefix)
	case limit > 0 && len(idx) < int(min(int64(limit), before)):
		return len(idx), fmt.Errorf("scan limit %d: %d rows, %d were committed", limit, len(idx), before)
	case limit > 0 && !reverse && low != min(int64(limit), before):
		return len(idx), fmt.Errorf("scan limit %d: %d of the first committed rows", limit, low)
	}
	return len(idx), nil
}

func slicesSeq(muts []client.Mutation) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for _, m := range muts {
			if !yield(client.ImportRow{Mutation: m}, nil) {
				return
			}
		}
	}
}
