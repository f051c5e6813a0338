//go:build integration

package reliability_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// condWriter checks, under TestClusterChaos's kills, what the HBase driver's CheckAndMutateBatch
// promises: a row it answers applied is durable. Its rows go with ASYNC_WAL and each call ends with
// one synced barrier (backends/hbase/condsync.go); a row the barrier did not cover would be lost
// when its region server is SIGKILLed within the second before the WAL's own sync.
type condWriter struct {
	b     *hbase.Backend
	table string // unsalted, 6 regions, in the monkey's tables

	mu     sync.Mutex
	acked  [][]byte // applied, without error: must be there at the end
	failed int      // rows answered with an error, or in a call that failed (absent or exact)
}

// Each of the 6 writers sends a batch of condBatchRows every condBatchPace: about 1,900 rows/s, a
// few hundred of them in the second before each kill, without starving the chaos test's other work.
const (
	condBatchRows = 64
	condBatchPace = 200 * time.Millisecond
)

func newCondWriter(ctx context.Context, t *testing.T, b *hbase.Backend) *condWriter {
	t.Helper()
	w := &condWriter{b: b, table: hbasetest.Table("brine_chaos_cond")}
	var splits [][]byte
	for i := 1; i < 6; i++ {
		splits = append(splits, fmt.Appendf(nil, "k%d", i))
	}
	if err := b.CreateTable(ctx, w.table, backends.TableOptions{Families: []string{"d"}, SplitKeys: splits}); err != nil {
		t.Fatalf("CreateTable(%s): %v", w.table, err)
	}
	return w
}

// write sends put-if-absent batches of fresh rows, one writer per region's key prefix, until ctx ends.
func (w *condWriter) write(ctx context.Context, t *testing.T) {
	var wg sync.WaitGroup
	for id := range 6 {
		wg.Go(func() {
			tick := time.NewTicker(condBatchPace)
			defer tick.Stop()
			for seq := 0; ctx.Err() == nil; seq++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				ms := make([]backends.CondMutation, condBatchRows)
				for i := range ms {
					k := fmt.Appendf(nil, "k%d-%06d-%02d", id, seq, i)
					ms[i] = backends.CondMutation{Cond: backends.Condition{Family: "d", Qualifier: "q"},
						Mut: backends.Mutation{Key: k, Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: value(k)}}}}
				}
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				applied, rowErrs, err := w.b.CheckAndMutateBatch(cctx, w.table, ms)
				cancel()
				w.mu.Lock()
				for i, cm := range ms {
					switch {
					case err != nil || (rowErrs != nil && rowErrs[i] != nil):
						w.failed++
					case applied[i]:
						w.acked = append(w.acked, cm.Mut.Key)
					default:
						t.Errorf("put-if-absent of the fresh row %s not applied", cm.Mut.Key)
					}
				}
				w.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// verify reads every acknowledged row back through b (a backend that saw none of the chaos) and
// returns how many are missing or wrong.
func (w *condWriter) verify(ctx context.Context, b *hbase.Backend) (lost int, err error) {
	for chunk := range slices.Chunk(w.acked, 500) {
		rows, err := b.Read(ctx, w.table, chunk, backends.ReadOptions{})
		if err != nil {
			return 0, err
		}
		for i, r := range rows {
			if len(r.Cells) != 1 || !bytes.Equal(r.Cells[0].Value, value(chunk[i])) {
				lost++
			}
		}
	}
	return lost, nil
}
