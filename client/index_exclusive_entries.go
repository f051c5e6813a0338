package client

import (
	"bytes"
	"context"
	"slices"
	"sync"
)

// DefaultEntryBuffer is how many bytes of index entries an exclusive Import holds, by default, to
// write them in key order (ExclusiveOptions.EntryBuffer).
const DefaultEntryBuffer = 64 << 20

// entryBuffer holds the index entries that exclusive Imports have planned, and whose rows are
// written, until it writes them sorted by key: when it holds limit bytes, at the end of each
// Import, and at Release. Under the fence the indexes are building, so an entry may land after its
// row. Sorted, an index's entries reach the store the way a plain Import's monotonic keys do: on a
// B-tree (the embedded store) each page is written once per run instead of once per batch of rows,
// and on HBase each region takes full batches. What a failed or lost write leaves, Release repairs.
type entryBuffer struct {
	limit int

	mu   sync.Mutex
	puts [][][]Mutation // per index (by position), the batches' entries
	dels [][][]Mutation // per index, the deletes of the entries rows left
	size int            // bytes held, roughly

	flushing sync.Mutex // one run at a time, in order: a run's deletes after the runs before it
}

// add takes one batch's entries and deletes, per index; it reports whether the buffer is full.
func (b *entryBuffer) add(puts, dels [][]Mutation) (full bool) {
	n := 0
	for _, ms := range [][][]Mutation{puts, dels} {
		for _, m := range ms {
			for _, e := range m {
				n += mutationSize(e)
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.puts == nil {
		b.puts, b.dels = make([][][]Mutation, len(puts)), make([][][]Mutation, len(puts))
	}
	for k := range puts {
		if len(puts[k]) > 0 {
			b.puts[k] = append(b.puts[k], puts[k])
		}
		if len(dels[k]) > 0 {
			b.dels[k] = append(b.dels[k], dels[k])
		}
	}
	b.size += n
	return b.size >= b.limit
}

// take empties the buffer and returns what it held, per index: the entries sorted by key, and the
// deletes.
func (b *entryBuffer) take() (puts, dels [][]Mutation) {
	b.mu.Lock()
	held, gone := b.puts, b.dels
	b.puts, b.dels, b.size = nil, nil, 0
	b.mu.Unlock()
	puts, dels = make([][]Mutation, len(held)), make([][]Mutation, len(held))
	for k := range held {
		puts[k] = slices.Concat(held[k]...)
		slices.SortFunc(puts[k], func(a, b Mutation) int { return bytes.Compare(a.Key, b.Key) })
		dels[k] = slices.Concat(gone[k]...)
	}
	return puts, dels
}

// flush writes what x's buffer holds: per index its entries, sorted, then the deletes of the entries
// rows left (an entry that moved away and back within one Import is a key given twice, which
// Release repairs). A failed write leaves rows without their entries, or stale entries: x is dirty,
// and Release repairs them from the rows.
func (x *ExclusiveTable) flush(ctx context.Context) {
	b := &x.entries
	b.flushing.Lock()
	defer b.flushing.Unlock()
	puts, dels := b.take()
	var wg sync.WaitGroup
	for k, ix := range x.it.indexes[:len(puts)] {
		wg.Go(func() {
			for _, w := range []struct {
				what string
				muts []Mutation
			}{{"entries", puts[k]}, {"deletes of moved entries", dels[k]}} {
				if err := applyAll(ctx, ix.table, w.muts); err != nil {
					x.dirty.Store(true)
					x.it.t.c.core.Logger.WarnContext(ctx, "brine: exclusive import: index writes failed; Release repairs them",
						"table", x.Name(), "index", ix.cfg.Name, "what", w.what, "rows", len(w.muts), "err", err)
				}
			}
		})
	}
	wg.Wait()
}

// mutationSize is roughly what m holds in memory.
func mutationSize(m Mutation) int {
	n := 64 + len(m.Key)
	for _, c := range m.Cells {
		n += 64 + len(c.Family) + len(c.Qualifier) + len(c.Value)
	}
	return n
}
