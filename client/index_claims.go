package client

import (
	"fmt"
	"hash/maphash"

	"github.com/brine-kv/brine/internal/route"
)

// claim is the first input row of an import to give a unique index key: its input position and its
// main key's hash.
type claim struct {
	row  int64
	main uint64
}

// firstClaims is an indexed Import's admission rule for unique indexes, nil when it has none: the
// first input row to give a unique key to a main row wins it, and a later row giving it to another
// main row is refused before it is batched. Batches of different buckets are written in parallel,
// so without it the winner was whichever batch claimed first. Only keys a row's own cells give are
// known (a row that sets some of an index's parts, the store holding the rest, is left to the
// protocol). Memory: one seeded 64-bit hash per key, as Import's duplicate count keeps; two keys
// share one with odds of about n²/2^65, and the later row is then refused, never dropped.
func (it *indexedTable) firstClaims() func(route.Pending) error {
	var unique []*Index
	for _, ix := range it.indexes {
		if ix.cfg.Unique {
			unique = append(unique, ix)
		}
	}
	if len(unique) == 0 {
		return nil
	}
	seed := maphash.MakeSeed()
	claims := map[uint64]claim{} // Import calls admit from its one reading goroutine
	return func(r route.Pending) error {
		if r.Row.Delete {
			return nil
		}
		main := maphash.Bytes(seed, r.Row.Key)
		for _, ix := range unique {
			k, ok, err := ix.EntryKey(r.Row.Key, r.Row.Cells)
			if err != nil || !ok {
				continue // the protocol reports it, or the row gives no key of its own
			}
			var h maphash.Hash
			h.SetSeed(seed)
			h.WriteString(ix.cfg.Name)
			h.WriteByte(0)
			h.Write(k)
			c, seen := claims[h.Sum64()]
			switch {
			case !seen:
				claims[h.Sum64()] = claim{row: r.Index, main: main}
			case c.main != main:
				return fmt.Errorf("input row %d (key %s): index %s key %s: %w: input row %d gave it first",
					r.Index, it.t.printKey(r.Row.Key), ix.cfg.Name, ix.table.printKey(k), ErrUniqueViolation, c.row)
			}
		}
		return nil
	}
}
