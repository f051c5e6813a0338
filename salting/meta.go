package salting

import (
	"fmt"
)

// MetaKey is the table-meta key under which a table's salting spec is stored when brine creates (or
// adopts) it. Package client and both drop-ins read it through Resolve.
const MetaKey = "brine.salt"

// Resolve answers "which salter does this table use" for a table whose meta is meta: the given
// salter, which must match the stored spec if there is one (ErrSpecMismatch); else the stored spec;
// else, with unsalted, "none"; else ErrNoSpec. A table brine did not create is thus never read
// through a guessed salter: its keys may carry a salt that "none" would return as data.
func Resolve(meta map[string]string, given Salter, unsalted bool) (Salter, error) {
	stored, ok := meta[MetaKey]
	switch {
	case given != nil && ok && given.Spec() != CanonicalSpec(stored):
		return nil, fmt.Errorf("configured %q, table has %q: %w", given.Spec(), stored, ErrSpecMismatch)
	case given != nil:
		return given, nil
	case ok:
		s, err := ParseStoredSpec(stored)
		if err != nil {
			return nil, fmt.Errorf("stored salting spec %q: %w", stored, err)
		}
		return s, nil
	case unsalted:
		return ParseSpec("none")
	}
	return nil, ErrNoSpec
}
