package tablestore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// prepared is one mutation turned into a row change, validated.
type prepared struct {
	idx        int
	key        string
	change     ots.RowChange
	size       int
	idempotent bool // may be sent again after an ambiguous failure (timeout)
}

// prepare validates a mutation against the service's limits and builds its row change. A put becomes
// an UpdateRow that puts the cells (a PutRow would replace the whole row, dropping the other columns,
// where brine's contract, like HBase, writes only the cells given); deleting cells becomes an UpdateRow
// deleting all versions of those columns (one version, of a cell with a timestamp); deleting a row,
// a DeleteRow. Every condition is IGNORE.
func (b *Backend) prepare(s *keySchema, table string, i int, m backends.Mutation) (*prepared, error) {
	vals, err := s.values(m.Key)
	if err != nil {
		return nil, err
	}
	pk := s.primaryKey(vals)
	p := &prepared{idx: i, key: string(m.Key), size: rowOverhead + len(m.Key)}
	for _, c := range s.cols {
		p.size += len(c.Name)
	}
	if m.Delete && len(m.Cells) == 0 {
		ch := &ots.DeleteRowChange{TableName: table, PrimaryKey: pk}
		ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
		p.change = ch
		return p, nil
	}
	if len(m.Cells) == 0 {
		return nil, fmt.Errorf("tablestore: key %q: %w: a put without cells", m.Key, backends.ErrInvalidArgument)
	}
	if len(m.Cells) > maxColumnsPerWrite {
		return nil, fmt.Errorf("tablestore: key %q: %w: %d columns, Tablestore takes at most %d per row operation",
			m.Key, backends.ErrInvalidArgument, len(m.Cells), maxColumnsPerWrite)
	}
	type col struct {
		name string
		cell backends.Cell
	}
	var cols []col
	for _, c := range m.Cells {
		if err := driverkit.CheckFamily(s.families, c.Family); err != nil {
			return nil, fmt.Errorf("tablestore: key %q: %w", m.Key, err)
		}
		name, err := ColumnName(c.Family, c.Qualifier)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", m.Key, err)
		}
		if s.hasColumn(name) {
			return nil, fmt.Errorf("tablestore: key %q: column %q: %w: it is a primary-key column", m.Key, name, backends.ErrInvalidArgument)
		}
		if err := driverkit.CheckStamp(m.Delete, &c); err != nil {
			return nil, fmt.Errorf("tablestore: key %q: column %q: %w", m.Key, name, err)
		}
		if !m.Delete && len(c.Value) > maxValueLen {
			return nil, fmt.Errorf("tablestore: key %q: column %q: %w: value of %d bytes, Tablestore takes at most %d",
				m.Key, name, backends.ErrInvalidArgument, len(c.Value), maxValueLen)
		}
		cols = append(cols, col{name, c})
	}
	byName := func(a, b col) int { return strings.Compare(a.name, b.name) }
	if m.Delete {
		// A column's delete of every version (timestamp 0, sorted first) takes its versions' with it.
		slices.SortStableFunc(cols, func(a, b col) int { return cmp.Or(byName(a, b), cmp.Compare(a.cell.Timestamp, b.cell.Timestamp)) })
		cols = slices.CompactFunc(cols, func(a, b col) bool {
			return a.name == b.name && (a.cell.Timestamp == 0 || a.cell.Timestamp == b.cell.Timestamp)
		})
	} else {
		// One entry per version, as every store keeps them: of two cells with one column and
		// timestamp the last given wins; the table trims to its MaxVersions.
		cols = driverkit.KeepVersions(cols, len(cols), byName, func(c col) int64 { return c.cell.Timestamp })
	}
	ch := &ots.UpdateRowChange{TableName: table, PrimaryKey: pk}
	ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
	p.idempotent = !m.Delete
	for _, c := range cols {
		p.size += cellOverhead + len(c.name)
		switch {
		case m.Delete && c.cell.Timestamp > 0:
			ch.DeleteColumnWithTimestamp(c.name, c.cell.Timestamp)
			continue
		case m.Delete:
			ch.DeleteColumn(c.name)
			continue
		}
		v := c.cell.Value
		if v == nil {
			v = []byte{}
		}
		p.size += len(v) + 8
		ch.Columns = append(ch.Columns, ots.ColumnToUpdate{
			ColumnName: c.name, Value: v, Timestamp: c.cell.Timestamp, HasTimestamp: c.cell.Timestamp != 0,
		})
		if c.cell.Timestamp == 0 {
			p.idempotent = false // the server stamps it: a second try writes another version
		}
	}
	if p.size-rowOverhead > maxRowSize {
		return nil, fmt.Errorf("tablestore: key %q: %w: row of about %d bytes, Tablestore takes at most %d",
			m.Key, backends.ErrInvalidArgument, p.size-rowOverhead, maxRowSize)
	}
	p.change = ch
	return p, nil
}
