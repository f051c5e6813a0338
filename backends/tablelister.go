package backends

import "context"

// TableLister is implemented by drivers that can list the tables of a store, so tools can show what is
// there (`brine tables`).
type TableLister interface {
	// Tables returns the names of the store's tables, sorted.
	Tables(ctx context.Context) ([]string, error)
}
