package tablestore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// expandFamilyDeletes turns each delete of a whole family (a cell with an empty Qualifier) into a
// delete of the family's columns the row holds: Tablestore has no families, only columns named
// family__qualifier, and selects columns by exact name. The rows are read first, in one Read, so the
// delete is not atomic with a write racing it into the same family: a column created between the read
// and the delete survives, as if written after it. done[i] is set for mutations settled here: a
// failed read (its error in rowErrs[i]) or nothing left to delete. muts is not modified; the result
// may share it. err is a failure of the whole call (table missing, ctx ended).
func (b *Backend) expandFamilyDeletes(ctx context.Context, table string, s *keySchema, muts []backends.Mutation, rowErrs []error) (_ []backends.Mutation, done []bool, err error) {
	done = make([]bool, len(muts))
	var idx []int
	var keys [][]byte
	var cols []backends.Column
	for i, m := range muts {
		if !m.Delete || !slices.ContainsFunc(m.Cells, func(c backends.Cell) bool { return c.Qualifier == "" }) {
			continue
		}
		if len(m.Key) == 0 {
			continue // prepare reports it
		}
		idx = append(idx, i)
		keys = append(keys, m.Key)
		for _, c := range m.Cells {
			if c.Qualifier == "" && !slices.Contains(cols, backends.Column{Family: c.Family}) {
				cols = append(cols, backends.Column{Family: c.Family})
			}
		}
	}
	if len(idx) == 0 {
		return muts, done, nil
	}
	if err := driverkit.CheckColumnFamilies(s.families, cols); err != nil {
		// Some family is unknown: leave those rows to prepare, which refuses them one by one, and
		// expand the others with a read of the known families only.
		known := slices.DeleteFunc(slices.Clone(cols), func(c backends.Column) bool {
			return driverkit.CheckFamily(s.families, c.Family) != nil
		})
		if len(known) == 0 {
			return muts, done, nil
		}
		cols = known
	}
	rows, err := b.Read(ctx, table, keys, backends.ReadOptions{Columns: cols})
	if err != nil {
		if errors.Is(err, backends.ErrTableNotFound) || ctx.Err() != nil {
			return nil, nil, err
		}
		for _, i := range idx {
			rowErrs[i], done[i] = fmt.Errorf("tablestore: read the family columns to delete: %w", err), true
		}
		return muts, done, nil
	}
	out := slices.Clone(muts)
	for j, i := range idx {
		m := muts[i]
		var cells []backends.Cell
		for _, c := range m.Cells {
			if c.Qualifier != "" || c.Timestamp != 0 || driverkit.CheckFamily(s.families, c.Family) != nil {
				cells = append(cells, c) // a column, or a family prepare refuses (unknown, or stamped)
				continue
			}
			for _, have := range rows[j].Cells {
				if have.Family == c.Family {
					cells = append(cells, backends.Cell{Family: have.Family, Qualifier: have.Qualifier})
				}
			}
		}
		if len(cells) == 0 {
			done[i] = true // nothing to delete; an empty delete would delete the whole row
			continue
		}
		out[i] = backends.Mutation{Key: m.Key, Delete: true, Cells: cells}
	}
	return out, done, nil
}
