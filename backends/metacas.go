package backends

import (
	"context"
	"errors"
)

// ErrMetaChanged: RewriteTableMeta found a table's stored meta other than the one the caller read;
// read it again and redo the change.
var ErrMetaChanged = errors.New("brine: table meta changed by another writer")

// MetaRewriter is implemented by drivers that can replace a table's stored Meta atomically, which is
// how a table gains or loses an index while it is in use. Every driver of this module implements it.
type MetaRewriter interface {
	// RewriteTableMeta replaces table's Meta with newMeta if the stored Meta equals old (key for key;
	// nil and empty are equal), atomically with respect to every other RewriteTableMeta: of two
	// rewrites from the same old, one fails with ErrMetaChanged. TableMeta returns newMeta from then
	// on, until the table is deleted (a table created again under the name starts from its own
	// Meta). ErrTableNotFound if the table is not there.
	RewriteTableMeta(ctx context.Context, table string, old, newMeta map[string]string) error
}
