package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
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
//
// It holds them encoded (entryRun), not as Mutations: a first load's buffer is most of the client's
// live heap, and as slices of cells it would be scanned by every garbage collection of the Import.
type entryBuffer struct {
	limit int

	mu   sync.Mutex
	puts []entryRun // per index (by position), the batches' entries
	dels []entryRun // per index, the deletes of the entries rows left
	size int        // bytes held

	flushing sync.Mutex // one run at a time, in order: a run's deletes after the runs before it
}

// add takes one batch's entries and deletes, per index; it reports whether the buffer is full.
func (b *entryBuffer) add(puts, dels [][]Mutation) (full bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.puts == nil {
		b.puts, b.dels = make([]entryRun, len(puts)), make([]entryRun, len(puts))
	}
	for k := range puts {
		b.size += b.puts[k].add(puts[k]) + b.dels[k].add(dels[k])
	}
	return b.size >= b.limit
}

// take empties the buffer and returns what it held, per index: the entries sorted by key, and the
// deletes.
func (b *entryBuffer) take() (puts, dels []entryRun) {
	b.mu.Lock()
	puts, dels = b.puts, b.dels
	b.puts, b.dels, b.size = nil, nil, 0
	b.mu.Unlock() // the batches go on adding while these are sorted
	for k := range puts {
		puts[k].sort()
	}
	return puts, dels
}

// entryRun is mutations encoded one after another in one byte slice, which holds no pointer for the
// garbage collector to follow: per mutation its key, whether it deletes, and its cells (family,
// qualifier, value, timestamp), lengths as uvarints.
type entryRun struct {
	buf  []byte
	offs []int // where each mutation starts, in the order mutations returns them
}

// add appends ms and returns the bytes they took, their offsets included.
func (r *entryRun) add(ms []Mutation) int {
	n := len(r.buf)
	for _, m := range ms {
		r.offs = append(r.offs, len(r.buf))
		r.buf = appendBytes(r.buf, m.Key)
		head := uint64(len(m.Cells)) << 1 // and the low bit: a delete
		if m.Delete {
			head |= 1
		}
		r.buf = binary.AppendUvarint(r.buf, head)
		for _, c := range m.Cells {
			r.buf = appendBytes(appendBytes(appendBytes(r.buf, c.Family), c.Qualifier), c.Value)
			r.buf = binary.AppendVarint(r.buf, c.Timestamp)
		}
	}
	return len(r.buf) - n + 8*len(ms)
}

// sort orders the mutations by key; two of one key keep no particular order.
func (r *entryRun) sort() {
	slices.SortFunc(r.offs, func(a, b int) int { return bytes.Compare(r.key(a), r.key(b)) })
}

// key is the key of the mutation at off.
func (r *entryRun) key(off int) []byte {
	key, _ := nextBytes(r.buf[off:])
	return key
}

// mutations decodes the mutations at offs, some of the run's; keys and values share its buffer.
// names interns the families and qualifiers.
func (r *entryRun) mutations(offs []int, names map[string]string) []Mutation {
	ms := make([]Mutation, len(offs))
	var cells []Cell // one allocation for many mutations' cells
	for i, off := range offs {
		b := r.buf[off:]
		ms[i].Key, b = nextBytes(b)
		head, n := binary.Uvarint(b)
		b = b[n:]
		ms[i].Delete = head&1 == 1
		if head>>1 == 0 {
			continue
		}
		if cap(cells)-len(cells) < int(head>>1) {
			cells = make([]Cell, 0, max(int(head>>1), 1024))
		}
		start := len(cells)
		for range head >> 1 {
			var fam, qual, val []byte
			fam, b = nextBytes(b)
			qual, b = nextBytes(b)
			val, b = nextBytes(b)
			ts, n := binary.Varint(b)
			b = b[n:]
			cells = append(cells, Cell{Family: intern(names, fam), Qualifier: intern(names, qual), Value: val, Timestamp: ts})
		}
		ms[i].Cells = cells[start:len(cells):len(cells)]
	}
	return ms
}

// appendBytes appends v, its length first.
func appendBytes[T []byte | string](dst []byte, v T) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(v))), v...)
}

// nextBytes reads what appendBytes appended at the start of b: the bytes, and what follows them.
func nextBytes(b []byte) (v, rest []byte) {
	l, n := binary.Uvarint(b)
	b = b[n:]
	return b[:l:l], b[l:]
}

// intern returns b as a string, one per distinct value in names.
func intern(names map[string]string, b []byte) string {
	if s, ok := names[string(b)]; ok {
		return s
	}
	s := string(b)
	names[s] = s
	return s
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
				run  *entryRun
			}{{"entries", &puts[k]}, {"deletes of moved entries", &dels[k]}} {
				if err := w.run.write(ctx, ix.table); err != nil {
					x.dirty.Store(true)
					x.it.t.c.core.Logger.WarnContext(ctx, "brine: exclusive import: index writes failed; Release repairs them",
						"table", x.Name(), "index", ix.cfg.Name, "what", w.what, "rows", len(w.run.offs), "err", err)
				}
			}
		})
	}
	wg.Wait()
}

// flushSlice is how many of a run's mutations flush decodes and writes at a time: the Mutations
// they decode to take several times the bytes of the run that holds them.
const flushSlice = 32 << 10

// write applies the run's mutations to t in its order, flushSlice at a time, and returns the
// failures.
func (r *entryRun) write(ctx context.Context, t *Table) error {
	names := map[string]string{} // families and qualifiers: a handful, one string each
	var errs []error
	for offs := range slices.Chunk(r.offs, flushSlice) {
		errs = append(errs, applyAll(ctx, t, r.mutations(offs, names)))
	}
	return errors.Join(errs...)
}
