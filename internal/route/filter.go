package route

import (
	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// splitFilter separates what the store evaluates from what the client evaluates on logical keys: a
// filter without row-key leaves goes to the store whole; of a top-level AND, the conjuncts without
// them do (and the cell filters, unless a conjunct left to the client reads cells); otherwise
// everything stays in the client.
func splitFilter(f *backends.Filter) (store, local *backends.Filter) {
	if !driverkit.Has(f, backends.FilterKeyRegex) {
		return f, nil
	}
	if f.Kind != backends.FilterAnd {
		return nil, f
	}
	var s, l []backends.Filter
	for _, sub := range f.Subs {
		if driverkit.Has(&sub, backends.FilterKeyRegex) {
			l = append(l, sub)
		} else {
			s = append(s, sub)
		}
	}
	join := func(fs []backends.Filter) *backends.Filter {
		switch len(fs) {
		case 0:
			return nil
		case 1:
			return &fs[0]
		}
		return &backends.Filter{Kind: backends.FilterAnd, Subs: fs}
	}
	// Row predicates test the row before its cells are trimmed: with a conjunct that reads cells
	// here, the client trims too, after it.
	if readsCells(l) {
		s, l = moveCells(s, l)
	}
	return join(s), join(l)
}

// readsCells reports whether one of fs has a leaf that tests a column's value.
func readsCells(fs []backends.Filter) bool {
	for i := range fs {
		if driverkit.Has(&fs[i], backends.FilterCompare) || driverkit.Has(&fs[i], backends.FilterRegex) {
			return true
		}
	}
	return false
}

// moveCells moves store's conjuncts that hold cell leaves to local's end.
func moveCells(store, local []backends.Filter) (s, l []backends.Filter) {
	for _, f := range store {
		if driverkit.HasCells(&f) {
			local = append(local, f)
		} else {
			s = append(s, f)
		}
	}
	return s, local
}
