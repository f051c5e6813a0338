package local

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
)

// RewriteTableMeta replaces the table's Meta if it is still old. The comparison and the write run
// under the store's table lock, which every rewrite takes, so they are one step; the cached
// tableInfo is replaced, never changed, since readers hold it without the lock.
func (s *Backend) RewriteTableMeta(ctx context.Context, name string, old, newMeta map[string]string) error {
	ti, unlock, err := s.lockTable(ctx, "rewrite meta", name)
	if err != nil {
		return err
	}
	defer unlock()
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

// lockTable takes the store's table lock for a change of name's entry (op names the call in errors)
// and returns the entry and the unlock; ErrTableNotFound when there is none.
func (s *Backend) lockTable(ctx context.Context, op, name string) (*tableInfo, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("local: %s %q: %w", op, name, err)
	}
	if err := s.usable(true); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	ti := s.tables[name]
	if ti == nil {
		s.mu.Unlock()
		return nil, nil, fmt.Errorf("local: %s %q: %w", op, name, backends.ErrTableNotFound)
	}
	return ti, s.mu.Unlock, nil
}
