package memory

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// The row semantics: validating and stamping a mutation, applying it to a row's cells, and choosing
// what a read returns. The version rules themselves are package backends'.

// change is a validated mutation, ready to apply to a row's cells.
type change struct {
	key    []byte
	delete bool
	cells  []backends.Cell // put: sorted, one per column, stamped; delete: the columns named
	// stamped: cells of timestamp 0 wait for the stamp the table's write lock gives (see stamp).
	stamped bool
}

func prepare(families map[string]bool, versions int, m backends.Mutation) (*change, error) {
	if err := driverkit.CheckMutation(families, MaxKeyLen, &m); err != nil {
		return nil, err
	}
	c := &change{key: bytes.Clone(m.Key), delete: m.Delete, cells: make([]backends.Cell, 0, len(m.Cells))}
	for _, cell := range m.Cells {
		if m.Delete {
			c.cells = append(c.cells, backends.Cell{Family: cell.Family, Qualifier: cell.Qualifier, Timestamp: cell.Timestamp})
			continue
		}
		if cell.Timestamp == 0 {
			c.stamped = true
		}
		cell.Value = bytes.Clone(cell.Value)
		c.cells = append(c.cells, cell)
	}
	if !m.Delete && !c.stamped {
		c.cells = driverkit.KeepVersions(c.cells, versions, compareColumn, cellTS)
	}
	return c, nil
}

// stamp gives the cells of timestamp 0 the stamp now, taken under the table's write lock: a write
// stamped before it waits for the lock could be applied after one stamped later, acknowledged yet
// hidden under the older write's value.
func (c *change) stamp(now int64, versions int) {
	if !c.stamped {
		return
	}
	for i := range c.cells {
		if c.cells[i].Timestamp == 0 {
			c.cells[i].Timestamp = now
		}
	}
	c.cells = driverkit.KeepVersions(c.cells, versions, compareColumn, cellTS)
	c.stamped = false
}

// apply returns the row's cells after the change, keeping versions of each column; old is not
// modified.
func (c *change) apply(old []backends.Cell, versions int) []backends.Cell {
	switch {
	case c.delete && len(c.cells) == 0:
		return nil
	case c.delete:
		return slices.DeleteFunc(slices.Clone(old), func(o backends.Cell) bool {
			return slices.ContainsFunc(c.cells, func(d backends.Cell) bool {
				return driverkit.Deletes(d.Family, d.Qualifier, d.Timestamp, o.Family, o.Qualifier, o.Timestamp)
			})
		})
	}
	cells, _ := driverkit.MergeVersions(old, c.cells, versions, compareColumn, cellTS)
	return cells
}

func cellTS(c backends.Cell) int64 { return c.Timestamp }

func compareColumn(a, b backends.Cell) int {
	return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Qualifier, b.Qualifier))
}

// visible returns the stored cells a read with opts returns, not copied: none when opts.Filter
// fails the row or trims all its cells.
func visible(cells []backends.Cell, opts backends.ReadOptions) []backends.Cell {
	var out []backends.Cell
	for _, c := range cells {
		if driverkit.Selected(opts.Columns, c.Family, c.Qualifier) {
			out = append(out, c)
		}
	}
	out = driverkit.SelectVersions(out, opts.MaxVersions, opts.TimeRange, compareColumn, cellTS)
	return driverkit.Apply(opts.Filter, out)
}

// copyCells returns copies of the cells a read with opts returns; stored values are never handed out.
func copyCells(cells []backends.Cell, opts backends.ReadOptions) []backends.Cell {
	out := visible(cells, opts)
	for i := range out {
		out[i].Value = bytes.Clone(out[i].Value)
		if out[i].Value == nil {
			out[i].Value = []byte{}
		}
	}
	return out
}

func checkKey(k []byte) error { return driverkit.CheckKey(k, MaxKeyLen) }
