package local

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
)

var _ backends.MetaRewriter = (*Store)(nil)

// RewriteTableMeta replaces the table's Meta if it is still old. The comparison and the write run
// under the store's table lock, which every rewrite takes, so they are one step; the cached
// tableInfo is replaced, never changed, since readers hold it without the lock.
func (s *Store) RewriteTableMeta(ctx context.Context, name string, old, newMeta map[string]string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("local: rewrite meta %q: %w", name, err)
	}
	if err := s.usable(true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ti := s.tables[name]
	if ti == nil {
		return fmt.Errorf("local: rewrite meta %q: %w", name, backends.ErrTableNotFound)
	}
	if !maps.Equal(ti.Meta, old) {
		return fmt.Errorf("local: rewrite meta %q: %w", name, backends.ErrMetaChanged)
	}
	next := *ti
	next.Meta = maps.Clone(newMeta)
	enc, err := json.Marshal(&next)
	if err != nil {
		return fmt.Errorf("local: rewrite meta %q: %w", name, err)
	}
	err = s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(tablesBucket)).Put([]byte(name), enc)
	})
	if err != nil {
		return fmt.Errorf("local: rewrite meta %q: %w", name, dbErr(err))
	}
	s.tables[name] = &next
	return nil
}
