package dropin

import (
	"fmt"
	"slices"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// Tables with indexes (client.Table) are kept by an index protocol that every write goes
// through; the drop-in sits below client and cannot run it, so it refuses their writes, and hides
// the version column that the protocol keeps in each row (family + "__" + "_brine_v", see
// tablestore.ColumnName) from reads whose ColumnsToGet do not name it, as client does. A row that
// held that column alone (its user columns were deleted) is no row to the caller: GetRow and
// BatchGetRow answer as for a missing row, GetRange and Scan skip it.

// refuseWrite fails a write to a table with indexes, before anything is sent.
func (t *table) refuseWrite(op string) error {
	if t.version == "" {
		return nil
	}
	return badRequest(op, t.name, fmt.Errorf("%w: write it through client.Table, which keeps its index tables in step", ErrIndexedTable))
}

// hides says whether a read of t asking for columnsToGet must drop the version column.
func (t *table) hides(columnsToGet []string) bool {
	return t.version != "" && !slices.Contains(columnsToGet, t.version)
}

// visible drops the version column from cols, in place; gone says that cols held nothing else.
func (t *table) visible(cols []*ots.AttributeColumn) (kept []*ots.AttributeColumn, gone bool) {
	n := len(cols)
	kept = slices.DeleteFunc(cols, func(c *ots.AttributeColumn) bool { return c != nil && c.ColumnName == t.version })
	return kept, n > 0 && len(kept) == 0
}
