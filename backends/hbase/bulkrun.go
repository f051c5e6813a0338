package hbase

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"slices"
	"unsafe"

	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
	"github.com/brine-kv/brine/fanout"
)

// Sorted runs: what BulkImport spills when the cells it buffers pass BulkOptions.MemoryBytes. A
// run is one region's buffered cells, sorted by hfile.Compare (stably: cells of equal keys keep
// their input order), in a file of the work directory. A region's runs, in the order they were
// spilled, and what is still buffered are merged (stably again) into its store files, so memory
// holds at most MemoryBytes of cells plus one read buffer per run being merged.
//
// The encoding is private to one import and never outlives it (a run of a killed import is
// thrown away, see bulkmanifest.go), so it is plain: per cell a tag byte 1, then uvarint lengths
// before row, family and qualifier, the timestamp as uvarint, the type byte, the value's length
// and the value; a tag byte 0 ends the run, so a truncated run reads as an error, not as a short
// one.

// errBadRun is the error of a run that does not decode.
var errBadRun = errors.New("hbase: bulk import: corrupt sorted run")

const (
	runCell = 1
	runEnd  = 0
	// maxRunValue bounds a value or qualifier of a run: HBase's KeyValue lengths are Java ints.
	maxRunValue = math.MaxInt32
)

// cellOverhead is what a buffered cell costs beyond its bytes: the hfile.Cell itself.
const cellOverhead = int(unsafe.Sizeof(hfile.Cell{}))

// cellSize is the memory a buffered cell is counted for.
func cellSize(c hfile.Cell) int {
	return cellOverhead + len(c.Row) + len(c.Qualifier) + len(c.Value) // families are shared
}

// appendRunCell appends c's encoding (tag included) to b.
func appendRunCell(b []byte, c hfile.Cell) []byte {
	b = append(b, runCell)
	b = binary.AppendUvarint(b, uint64(len(c.Row)))
	b = append(b, c.Row...)
	b = binary.AppendUvarint(b, uint64(len(c.Family)))
	b = append(b, c.Family...)
	b = binary.AppendUvarint(b, uint64(len(c.Qualifier)))
	b = append(b, c.Qualifier...)
	b = binary.AppendUvarint(b, uint64(c.Timestamp))
	b = append(b, byte(c.Type))
	b = binary.AppendUvarint(b, uint64(len(c.Value)))
	return append(b, c.Value...)
}

// writeRun writes cells, sorted, as a run at path, synced: the HFiles made from it are recorded
// as written only after every run they read is whole.
func writeRun(path string, cells []hfile.Cell) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("hbase: bulk import: spill: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("hbase: bulk import: spill: %w", cerr)
		}
	}()
	w := bufio.NewWriterSize(f, 256<<10)
	var buf []byte
	for _, c := range cells {
		buf = appendRunCell(buf[:0], c)
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("hbase: bulk import: spill: %w", err)
		}
	}
	if err := w.WriteByte(runEnd); err != nil {
		return fmt.Errorf("hbase: bulk import: spill: %w", err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("hbase: bulk import: spill: %w", err)
	}
	return nil
}

// decodeRun reads the cells of a run from r, in order, and checks that it ends with the end tag
// and nothing after it. It stops at the first error, which it yields.
func decodeRun(r io.Reader) iter.Seq2[hfile.Cell, error] {
	return func(yield func(hfile.Cell, error) bool) {
		br, ok := r.(*bufio.Reader)
		if !ok {
			br = bufio.NewReaderSize(r, 64<<10)
		}
		for {
			tag, err := br.ReadByte()
			if err != nil {
				yield(hfile.Cell{}, fmt.Errorf("%w: no end tag: %w", errBadRun, err))
				return
			}
			if tag == runEnd {
				if _, err := br.ReadByte(); err != io.EOF {
					yield(hfile.Cell{}, fmt.Errorf("%w: bytes after the end tag", errBadRun))
				}
				return
			}
			if tag != runCell {
				yield(hfile.Cell{}, fmt.Errorf("%w: tag %d", errBadRun, tag))
				return
			}
			c, err := decodeRunCell(br)
			if err != nil {
				yield(hfile.Cell{}, err)
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// decodeRunCell reads one cell after its tag.
func decodeRunCell(br *bufio.Reader) (c hfile.Cell, err error) {
	if c.Row, err = readRunField(br, hfile.MaxRowLen); err != nil {
		return c, err
	}
	if c.Family, err = readRunField(br, hfile.MaxFamilyLen); err != nil {
		return c, err
	}
	if c.Qualifier, err = readRunField(br, maxRunValue); err != nil {
		return c, err
	}
	ts, err := binary.ReadUvarint(br)
	if err != nil || ts > math.MaxInt64 {
		return c, fmt.Errorf("%w: timestamp: %v", errBadRun, err)
	}
	c.Timestamp = int64(ts)
	t, err := br.ReadByte()
	if err != nil {
		return c, fmt.Errorf("%w: type: %w", errBadRun, err)
	}
	c.Type = hfile.Type(t)
	if c.Value, err = readRunField(br, maxRunValue); err != nil {
		return c, err
	}
	return c, nil
}

// readRunField reads a uvarint length of at most limit and that many bytes. The buffer grows as
// bytes arrive, so a corrupt length cannot make it allocate more than the run holds.
func readRunField(br *bufio.Reader, limit int) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("%w: length: %w", errBadRun, err)
	}
	if n > uint64(limit) {
		return nil, fmt.Errorf("%w: length %d over %d", errBadRun, n, limit)
	}
	if n <= 64<<10 {
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("%w: %w", errBadRun, io.ErrUnexpectedEOF)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(br, int64(n)))
	if err != nil || uint64(len(b)) != n {
		return nil, fmt.Errorf("%w: %w", errBadRun, io.ErrUnexpectedEOF)
	}
	return b, nil
}

// readRun is the cells of the run at path (decodeRun), the file closed when the sequence ends.
func readRun(path string) iter.Seq2[hfile.Cell, error] {
	return func(yield func(hfile.Cell, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield(hfile.Cell{}, fmt.Errorf("hbase: bulk import: %w", err))
			return
		}
		defer f.Close()
		for c, err := range decodeRun(f) {
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// sortRunCells sorts a region's buffered cells for a run or a file: stably, so that of cells with
// equal keys the one given last in the input stays last, and wins (mergeRuns).
func sortRunCells(cells []hfile.Cell) { slices.SortStableFunc(cells, hfile.Compare) }

// mergeRuns merges a region's sorted runs (in the order they were spilled) and its sorted rest,
// and yields each key once: of cells of equal keys (row, family, qualifier, timestamp, type), the
// last of the input, as HBase keeps the later of two puts of one key. Stable merging keeps input
// order among equal keys: runs hold earlier input than later runs, and the rest the latest.
func mergeRuns(ctx context.Context, runs []string, rest []hfile.Cell) iter.Seq2[hfile.Cell, error] {
	streams := make([]iter.Seq2[hfile.Cell, error], 0, len(runs)+1)
	for _, p := range runs {
		streams = append(streams, readRun(p))
	}
	if len(rest) > 0 {
		streams = append(streams, func(yield func(hfile.Cell, error) bool) {
			for _, c := range rest {
				if !yield(c, nil) {
					return
				}
			}
		})
	}
	merged := fanout.MergeSequential(ctx, streams, hfile.Compare, fanout.Options{})
	return lastOfEqual(merged)
}

// lastOfEqual yields, of each group of consecutive cells with equal keys, the last.
func lastOfEqual(cells iter.Seq2[hfile.Cell, error]) iter.Seq2[hfile.Cell, error] {
	return func(yield func(hfile.Cell, error) bool) {
		var held hfile.Cell
		have := false
		for c, err := range cells {
			if err != nil {
				yield(hfile.Cell{}, err)
				return
			}
			if have && hfile.Compare(held, c) != 0 {
				if !yield(held, nil) {
					return
				}
			}
			held, have = c, true
		}
		if have {
			yield(held, nil)
		}
	}
}
