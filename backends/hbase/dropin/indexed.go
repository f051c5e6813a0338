package dropin

import (
	"fmt"
	"slices"

	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

// Tables with indexes are kept by an index protocol that every write goes
// through; the drop-in sits below client and cannot run it, so it refuses their writes, and hides
// the version column that the protocol keeps in each row from reads that do not name it, as client
// does. A row whose only cell is that column (its user columns were deleted) is no row to the caller.

// refuseWrite fails a write to a table with indexes, before anything is sent.
func (t tableInfo) refuseWrite(call, table string) error {
	if !t.indexed {
		return nil
	}
	return fmt.Errorf("dropin: %s %q: %w: write it through client.Table, which keeps its index tables in step",
		call, table, ErrIndexedTable)
}

// hides says whether a read of t asking for cols must drop the version column: t has indexes and
// cols do not name the column by qualifier (a whole family does not count).
func (t tableInfo) hides(cols []*pb.Column) bool {
	if !t.indexed {
		return false
	}
	for _, col := range cols {
		if string(col.Family) != t.versionFamily {
			continue
		}
		for _, q := range col.Qualifier {
			if string(q) == indexproto.VersionQualifier {
				return false
			}
		}
	}
	return true
}

// visible drops the version column from cells, in place.
func (t tableInfo) visible(cells []*hrpc.Cell) []*hrpc.Cell {
	return slices.DeleteFunc(cells, func(c *hrpc.Cell) bool { return t.isVersion(c.Family, c.Qualifier) })
}

// isVersion says whether family:qualifier is t's version column.
func (t tableInfo) isVersion(family, qualifier []byte) bool {
	return t.indexed && string(family) == t.versionFamily && string(qualifier) == indexproto.VersionQualifier
}
