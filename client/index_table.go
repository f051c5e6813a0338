package client

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/salting"
)

// indexedTable is the index protocol's engine over one table: a Table whose stored meta declares
// indexes sends its calls here (Table.indexed), and its writes are then exactly the ones that keep
// the indexes in step. Each value holds one set of index definitions; the handle's indexView holds the
// current one.
//
// It lives in package client: the protocol writes the main table below its public API (a
// conditional data write carrying the version column, raw reads that see it), through t, a handle
// with no view of its own whose calls go straight to the router.
type indexedTable struct {
	t           *Table // the main table, raw, following rebuckets: the protocol's reads and data writes
	indexes     []*Index
	indexFamily string           // the family of the version column
	declared    bool             // the meta declares indexes, a dropping one too: calls go through the engine
	fence       indexproto.Fence // an exclusive holder's, when the meta records one (index_fence.go)
	view        *indexView       // shared by the copies of one handle: its indexes as last read
}

// hasIndexes reports whether table meta declares indexes.
func hasIndexes(meta map[string]string) bool {
	_, ok := indexproto.Indexed(meta)
	return ok
}

// withView gives raw, a routed table read from meta, the view of a handle: its engine built from
// meta, read just now. raw itself stays raw: the engine writes through it.
func (c *Client) withView(raw *Table, meta map[string]string) (*Table, error) {
	it := &indexedTable{t: raw}
	if err := c.attachIndexes(it, meta); err != nil {
		return nil, err
	}
	t := *raw
	t.view = newIndexView(c, it, meta)
	return &t, nil
}

// Name is the table's name in the store.
func (it *indexedTable) Name() string { return it.t.name }

// Salter is the table's salter (of a rebucketed table: the one serving it at the handle's last
// directory read).
func (it *indexedTable) Salter() salting.Salter { return it.t.Salter() }

// Index returns the table's index of that name, as of the handle's last reading of the table's
// definitions (its writes and queries read them again once older than the refresh interval); an
// unknown name fails with ErrIndexNotFound, naming the indexes the table has.
func (it *indexedTable) Index(name string) (*Index, error) {
	if ix := it.lookup(name); ix != nil {
		return ix, nil
	}
	names := make([]string, 0, len(it.latest().indexes))
	for _, ix := range it.latest().indexes {
		names = append(names, ix.cfg.Name)
	}
	return nil, fmt.Errorf("table %s: %w %q (its indexes: %s)", it.Name(), ErrIndexNotFound, name, strings.Join(names, ", "))
}

// lookup is Index, nil for an unknown name.
func (it *indexedTable) lookup(name string) *Index {
	for _, ix := range it.latest().indexes {
		if ix.cfg.Name == name {
			return ix
		}
	}
	return nil
}

// Indexes returns the table's indexes, sorted by name, as Index does: building ones too (see
// Index.State), not the ones being dropped.
func (it *indexedTable) Indexes() []*Index { return slices.Clone(it.latest().indexes) }

// versionColumn is the column holding the row's version.
func (it *indexedTable) versionColumn() Column {
	return Column{Family: it.indexFamily, Qualifier: versionQual}
}

// hidesVersion reports whether a read with opts leaves the version column out of its rows: it is
// the protocol's bookkeeping, not the caller's data, and shown only when Columns names it.
func (it *indexedTable) hidesVersion(opts []ReadOption) bool {
	return hidesColumn(it.versionColumn(), opts)
}

// hidesColumn reports whether a read with opts leaves the version column col out: Columns does not
// name it.
func hidesColumn(col Column, opts []ReadOption) bool {
	return !slices.Contains(readConfig(nil, opts).Read.Columns, col)
}

// Get reads one row as Table.Get does. The version column is returned only when Columns names it.
func (it *indexedTable) Get(ctx context.Context, key []byte, opts ...ReadOption) (Row, error) {
	row, err := it.t.Get(ctx, key, opts...)
	if err != nil || !it.hidesVersion(opts) {
		return row, err
	}
	if row.Cells = indexproto.DataCells(row.Cells); len(row.Cells) == 0 {
		return Row{}, fmt.Errorf("get %s: %w", it.t.printKey(key), ErrNotFound)
	}
	return row, nil
}

// GetMany reads many rows as Table.GetMany does. The version column is returned only when Columns
// names it.
func (it *indexedTable) GetMany(ctx context.Context, keys [][]byte, opts ...ReadOption) ([]Row, error) {
	rows, err := it.t.GetMany(ctx, keys, opts...)
	if err != nil || !it.hidesVersion(opts) {
		return rows, err
	}
	for i := range rows {
		rows[i].Cells = indexproto.DataCells(rows[i].Cells)
	}
	return rows, nil
}

// Scan reads a logical range as Table.Scan does. The version column is returned only when Columns
// names it (hideVersion).
func (it *indexedTable) Scan(ctx context.Context, r Range, opts ...ReadOption) iter.Seq2[Row, error] {
	scan := func(opts []ReadOption) iter.Seq2[Row, error] { return it.t.scan(ctx, r, opts) }
	if !it.hidesVersion(opts) {
		return scan(opts)
	}
	return hideVersion(scan, opts)
}

// hideVersion is scan with opts, without the version column: a row that holds nothing else (a new
// row's write in flight, or one whose writer died) is not returned, and does not count against Limit:
// the scan reads on past it, with scan again, for as many rows.
func hideVersion(scan func(opts []ReadOption) iter.Seq2[Row, error], opts []ReadOption) iter.Seq2[Row, error] {
	limit := readConfig(nil, opts).Limit
	return func(yield func(Row, error) bool) {
		page, want := opts, limit // want: the page's limit
		for n := 0; ; {
			read, skipped := 0, 0
			var last []byte
			for row, err := range scan(page) {
				if err != nil {
					yield(row, err)
					return
				}
				read, last = read+1, row.Key
				if row.Cells = indexproto.DataCells(row.Cells); len(row.Cells) == 0 {
					skipped++
					continue
				}
				if !yield(row, nil) {
					return
				}
				n++
			}
			if limit == 0 || skipped == 0 || read < want {
				return // no limit, the limit's rows all returned, or the range's end
			}
			want = limit - n
			page = append(slices.Clip(opts), Limit(want), ResumeAfter(last))
		}
	}
}

// CountByBucket counts the rows stored in each bucket, as Table.CountByBucket does.
func (it *indexedTable) CountByBucket(ctx context.Context) ([]int64, error) {
	return it.t.CountByBucket(ctx)
}

// Put writes cells to one row; see the package documentation for how the indexes are kept.
func (it *indexedTable) Put(ctx context.Context, key []byte, cells ...Cell) error {
	m, err := it.t.putMutation(key, cells)
	if err != nil {
		return err
	}
	return it.applyOne(ctx, "put", m)
}

// Delete deletes the given columns of a row (all versions), or the whole row when none are given.
// Deleting an indexed or covered column is refused with ErrInvalidArgument: delete the row or put a
// new value.
func (it *indexedTable) Delete(ctx context.Context, key []byte, columns ...Column) error {
	return it.applyOne(ctx, "delete", deleteMutation(key, columns))
}

func (it *indexedTable) applyOne(ctx context.Context, op string, m Mutation) error {
	return it.write(ctx, func(it *indexedTable) error { return it.applyOneNow(ctx, op, m) })
}

func (it *indexedTable) applyOneNow(ctx context.Context, op string, m Mutation) (err error) {
	indexed, err := it.indexedMutation(m)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %w", op, it.t.printKey(m.Key), err)
	case !indexed && !m.Delete:
		return it.t.applyOne(ctx, op, it.stamp(m))
	}
	ctx, c := it.t.c.core.Tel.Begin(ctx, op, it.t.name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, 1)) }()
	if err := it.t.checkKey(m.Key); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := it.writeOne(ctx, m); err != nil {
		return fmt.Errorf("%s %s: %w", op, it.t.printKey(m.Key), err)
	}
	return nil
}

// writeOne writes one mutation the stamp cannot version: through the index protocol, or, for a
// delete of columns no index uses, under a mark (deleteColumns).
func (it *indexedTable) writeOne(ctx context.Context, m Mutation) error {
	if m.Delete && len(m.Cells) > 0 {
		_, err := it.deleteColumns(ctx, m, nil)
		return err
	}
	return it.writeIndexed(ctx, m, false)
}

// stamp gives a put that keeps no index a new version too, in the same row mutation, so that the
// version changes with every put and row delete: what lets a conditional write (CheckAndMutate,
// Increment) check its own condition on the row it read and apply only if the version is unchanged.
// A column delete cannot carry a put; it runs under a mark instead (deleteColumns).
func (it *indexedTable) stamp(m Mutation) Mutation {
	if m.Delete {
		return m
	}
	m.Cells = append(slices.Clip(m.Cells), Cell{Family: it.indexFamily, Qualifier: versionQual, Value: indexproto.NewToken()})
	return m
}

// Apply applies many mutations as Table.Apply does, each row through the index protocol when it
// touches an index.
func (it *indexedTable) Apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error) {
	ctx, c := it.t.c.core.Tel.Begin(ctx, "apply", it.t.name)
	defer func() { c.End(ctx, err, 0, telemetry.AppliedRows(len(muts), rowErrs, err)) }()
	return it.applyIndexed(ctx, muts)
}

// Import writes a stream of rows as Table.Import does, each row through the index protocol when it
// touches an index. Of the input rows that give one key of a unique index to different main rows,
// the first in the input wins it, however the parallel batches land: a later one fails with
// ErrUniqueViolation naming the first, whether or not the first is written (see firstClaims).
func (it *indexedTable) Import(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (ImportStats, error) {
	return it.t.importRows(ctx, rows, opts, func(ctx context.Context, batch []route.Pending) ([]error, error) {
		muts := make([]Mutation, len(batch))
		for i, r := range batch {
			muts[i] = r.Logical()
		}
		return it.applyIndexed(ctx, muts)
	}, it.latest().firstClaims())
}
