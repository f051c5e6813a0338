package memory

import (
	"context"
	"slices"

	"github.com/brine-kv/brine/backends"
)

var _ backends.TableLister = (*Backend)(nil)

// Tables returns the names of the tables, sorted.
func (b *Backend) Tables(context.Context) ([]string, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, ErrClosed
	}
	names := make([]string, 0, len(b.tables))
	for name := range b.tables {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}
