package memory

import (
	"context"
	"fmt"
	"maps"

	"github.com/brine-kv/brine/backends"
)

// RewriteTableMeta replaces the table's Meta if it is still old, compared and replaced under the
// table's lock.
func (b *Backend) RewriteTableMeta(ctx context.Context, name string, old, newMeta map[string]string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: rewrite meta %q: %w", name, err)
	}
	t, err := b.table(name)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return fmt.Errorf("memory: rewrite meta %q: %w", name, backends.ErrTableNotFound)
	}
	if !maps.Equal(t.meta, old) {
		return fmt.Errorf("memory: rewrite meta %q: %w", name, backends.ErrMetaChanged)
	}
	t.meta = maps.Clone(newMeta)
	return nil
}
