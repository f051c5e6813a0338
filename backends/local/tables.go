package local

import (
	"context"
	"slices"

	"github.com/brine-kv/brine/backends"
)

var _ backends.TableLister = (*Store)(nil)

// Tables returns the names of the file's tables, sorted.
func (s *Store) Tables(context.Context) ([]string, error) {
	if err := s.usable(false); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.tables))
	for name := range s.tables {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}
