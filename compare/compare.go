// Package compare tells whether two tables hold the same rows, whatever their stores and salting, as
// HBase's HashTable and SyncTable do for two HBase tables: both tables are read once, in parallel, and
// hashed (128 bits) in chunks whose bounds the keys themselves choose, so that equal tables give equal chunk
// lists; only the chunks that differ are read again, from both sides, to name the keys that differ.
//
// A row is its logical key and its cells: family, qualifier, timestamp and value of each (the
// newest version only, unless Options.AllVersions). Two rows are equal when they hold the same cells,
// in whatever order their stores return them.
package compare

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
)

// Source is what a comparison reads: any table (client.TableAPI), or a wrapper of one.
type Source interface {
	Scan(ctx context.Context, r client.Range, opts ...client.ReadOption) iter.Seq2[client.Row, error]
}

// Kind is how a key differs between the two tables.
type Kind int

// The kinds of Difference.
const (
	OnlyInA Kind = iota + 1 // a has the row, b has not
	OnlyInB                 // b has the row, a has not
	Changed                 // both have it, with other cells
)

func (k Kind) String() string {
	switch k {
	case OnlyInA:
		return "only in a"
	case OnlyInB:
		return "only in b"
	case Changed:
		return "changed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Difference is one key whose rows differ; A and B are the rows as read (a zero Row where absent),
// with their cells in the canonical order (family, qualifier, newest first).
type Difference struct {
	Kind Kind
	Key  []byte
	A, B client.Row
}

// DefaultChunk is Options.Chunk's default: about this many rows of each side are read again for a
// chunk that differs.
const DefaultChunk = 1024

// Options tune a comparison.
type Options struct {
	// Chunk is the mean rows per chunk (default DefaultChunk). Smaller chunks cost more hashes and
	// less re-reading where the tables differ.
	Chunk int
	// AllVersions compares every version of each cell, not only the newest.
	AllVersions bool
	// Progress, when set, is called now and then from the reading goroutines with the rows read so
	// far from a and from b (its calls may overlap: it must be safe for concurrent use).
	Progress func(a, b int64)
	// Stats, when set, receives the comparison's counts once it has ended.
	Stats *Stats
	// Shard, when set, compares only that shard's rows of the plan a's buckets make (a must be a
	// salted table, a client.Table; or both sides period tables of one interval and time field,
	// compared period by period, each by its table's plan): Count comparisons, one per shard, find
	// together what one of the whole range finds.
	Shard Shard
}

// Stats count a comparison's work.
type Stats struct {
	RowsA, RowsB      int64 // rows read in the first pass
	Chunks, Differing int   // chunks of a, and differing key ranges read again
	RereadA, RereadB  int64 // rows read again where the tables differ
	Differences       int64
	// Unconfirmed counts ranges whose chunks differed but whose rows, read again, did not: rows
	// written between the two reads.
	Unconfirmed int
}

// Tables compares the rows of r in a and b and yields each key whose rows differ, in key order; an
// error ends the sequence. On equal tables each side is read once.
func Tables(ctx context.Context, a, b Source, r client.Range, opts Options) iter.Seq2[Difference, error] {
	if opts.Chunk <= 0 {
		opts.Chunk = DefaultChunk
	}
	var ropts []client.ReadOption
	if opts.AllVersions {
		ropts = append(ropts, client.MaxVersions(math.MaxInt32))
	}
	if opts.Shard.Sharded() {
		pa, aok := a.(*periods.Table)
		pb, bok := b.(*periods.Table)
		if aok && bok {
			return shardedPeriods(ctx, pa, pb, r, opts)
		}
	}
	return func(yield func(Difference, error) bool) {
		var st Stats
		defer func() {
			if opts.Stats != nil {
				*opts.Stats = st
			}
		}()
		a, b, r := a, b, r // each run of the sequence restricts them anew
		if opts.Shard.Sharded() {
			var ok bool
			var err error
			if a, b, r, ok, err = shardSides(a, b, opts.Shard, r); err != nil {
				yield(Difference{}, fmt.Errorf("compare: %w", err))
				return
			} else if !ok {
				return // the shard holds no key of r
			}
		}
		sd := newSeeds() // one set for both sides: they must choose the same bounds
		var ca, cb []chunk
		var progress func(side int, n int64)
		if opts.Progress != nil {
			var counts [2]atomic.Int64
			progress = func(side int, n int64) {
				counts[side].Store(n)
				opts.Progress(counts[0].Load(), counts[1].Load())
			}
		}
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			ca, st.RowsA, err = chunks(gctx, a, r, ropts, sd, opts.Chunk, 0, progress)
			return err
		})
		g.Go(func() (err error) {
			cb, st.RowsB, err = chunks(gctx, b, r, ropts, sd, opts.Chunk, 1, progress)
			return err
		})
		if err := g.Wait(); err != nil {
			yield(Difference{}, fmt.Errorf("compare: %w", err))
			return
		}
		st.Chunks = len(ca)
		for _, dr := range differing(ca, cb, r) {
			st.Differing++
			if !rowDiffs(ctx, a, b, dr, ropts, &st, yield) {
				return
			}
		}
	}
}

// chunk is a run of rows: those after the previous chunk's last key, to last (nil: to the range's
// end), hashed together.
type chunk struct {
	last []byte
	sum  [2]uint64
}

// seeds are one comparison's hash seeds, shared by both sides: bound picks chunk bounds, and sum
// hashes a chunk's rows twice, 128 bits, so that two chunks that differ hash alike with odds of
// about 2^-128 (a comparison runs in one process: the seeds need not be stable beyond it).
type seeds struct{ bound, sum1, sum2 maphash.Seed }

func newSeeds() seeds { return seeds{maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed()} }

// chunks reads src's rows of r once and cuts them into chunks: a row whose key hashes to 0 modulo
// size ends one, so the bounds depend on the keys alone, and both sides of equal tables cut alike.
func chunks(ctx context.Context, src Source, r client.Range, opts []client.ReadOption, sd seeds, size, side int, progress func(int, int64)) ([]chunk, int64, error) {
	var out []chunk
	var h1, h2 maphash.Hash
	h1.SetSeed(sd.sum1)
	h2.SetSeed(sd.sum2)
	var buf []byte
	var n int64
	for row, err := range src.Scan(ctx, r, opts...) {
		if err != nil {
			return nil, n, err
		}
		n++
		buf = appendRow(buf[:0], row)
		h1.Write(buf)
		h2.Write(buf)
		if maphash.Bytes(sd.bound, row.Key)%uint64(size) == 0 {
			out = append(out, chunk{last: bytes.Clone(row.Key), sum: [2]uint64{h1.Sum64(), h2.Sum64()}})
			h1.Reset()
			h2.Reset()
		}
		if progress != nil && n%10_000 == 0 {
			progress(side, n)
		}
	}
	if progress != nil {
		progress(side, n)
	}
	return append(out, chunk{sum: [2]uint64{h1.Sum64(), h2.Sum64()}}), n, nil
}

// appendRow appends what a row hashes as: its key and its cells in canonical order, every field
// length-prefixed so that no two rows write the same bytes.
func appendRow(buf []byte, row client.Row) []byte {
	put := func(b []byte) {
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	put(row.Key)
	buf = binary.AppendUvarint(buf, uint64(len(row.Cells)))
	for _, c := range canonical(row.Cells) {
		buf = binary.AppendUvarint(buf, uint64(len(c.Family)))
		buf = append(buf, c.Family...)
		buf = binary.AppendUvarint(buf, uint64(len(c.Qualifier)))
		buf = append(buf, c.Qualifier...)
		buf = binary.BigEndian.AppendUint64(buf, uint64(c.Timestamp))
		put(c.Value)
	}
	return buf
}

// canonical orders cells by family, qualifier, newest first: how the stores agree to differ.
func canonical(cells []client.Cell) []client.Cell {
	if slices.IsSortedFunc(cells, cmpCells) {
		return cells
	}
	return slices.SortedStableFunc(slices.Values(cells), cmpCells)
}

// differing walks both chunk lists in key order and returns the key ranges of r where they differ:
// a run of chunks from a bound both sides share to the next such bound, whose sums are not all
// equal. Adjacent ranges are joined.
func differing(ca, cb []chunk, r client.Range) []client.Range {
	var out []client.Range
	start := r.Start // of the current run, inclusive
	i, j := 0, 0
	for i < len(ca) && j < len(cb) {
		runStartI, runStartJ := i, j
		// Advance the side whose bound comes first until both stand on the same bound.
		for !sameBound(ca[i].last, cb[j].last) {
			if before(ca[i].last, cb[j].last) {
				i++
			} else {
				j++
			}
		}
		equal := i == runStartI && j == runStartJ && ca[i].sum == cb[j].sum
		end := r.End
		if ca[i].last != nil {
			end = keys.Successor(ca[i].last)
		}
		if !equal {
			if n := len(out); n > 0 && bytes.Equal(out[n-1].End, start) {
				out[n-1].End = end
			} else {
				out = append(out, client.Range{Start: start, End: end})
			}
		}
		start = end
		i, j = i+1, j+1
	}
	return out
}

// sameBound reports whether two chunk ends are the same bound (nil: the range's end).
func sameBound(x, y []byte) bool { return (x == nil) == (y == nil) && bytes.Equal(x, y) }

// before reports whether chunk end x comes before y; nil, the range's end, comes last.
func before(x, y []byte) bool { return x != nil && (y == nil || bytes.Compare(x, y) < 0) }

// rowDiffs reads dr from both sides, merging the two streams by key, and yields the keys whose rows
// differ; it returns false when yield asked to stop.
func rowDiffs(ctx context.Context, a, b Source, dr client.Range, opts []client.ReadOption, st *Stats, yield func(Difference, error) bool) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nextA, stopA := iter.Pull2(a.Scan(ctx, dr, opts...))
	defer stopA()
	nextB, stopB := iter.Pull2(b.Scan(ctx, dr, opts...))
	defer stopB()
	pull := func(next func() (client.Row, error, bool), n *int64) (client.Row, bool, error) {
		row, err, ok := next()
		if ok && err == nil {
			*n++
			row.Cells = canonical(row.Cells)
		}
		return row, ok, err
	}
	ra, okA, errA := pull(nextA, &st.RereadA)
	rb, okB, errB := pull(nextB, &st.RereadB)
	found := false
	for okA || okB {
		if err := cmp.Or(errA, errB); err != nil {
			yield(Difference{}, fmt.Errorf("compare: %w", err))
			return false
		}
		var d Difference
		c := 0
		switch {
		case !okB:
			c = -1
		case !okA:
			c = 1
		default:
			c = bytes.Compare(ra.Key, rb.Key)
		}
		switch {
		case c < 0:
			d = Difference{Kind: OnlyInA, Key: ra.Key, A: ra}
		case c > 0:
			d = Difference{Kind: OnlyInB, Key: rb.Key, B: rb}
		case !slices.EqualFunc(ra.Cells, rb.Cells, sameCell):
			d = Difference{Kind: Changed, Key: ra.Key, A: ra, B: rb}
		}
		if c <= 0 {
			ra, okA, errA = pull(nextA, &st.RereadA)
		}
		if c >= 0 {
			rb, okB, errB = pull(nextB, &st.RereadB)
		}
		if d.Kind != 0 {
			found = true
			st.Differences++
			if !yield(d, nil) {
				return false
			}
		}
	}
	if !found {
		st.Unconfirmed++
	}
	return true
}

func sameCell(x, y client.Cell) bool {
	return x.Family == y.Family && x.Qualifier == y.Qualifier && x.Timestamp == y.Timestamp && bytes.Equal(x.Value, y.Value)
}
