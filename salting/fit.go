package salting

import (
	"errors"
	"fmt"

	"github.com/brine-kv/brine/keys"
)

// ErrSchemaMismatch: a salting spec reads parts of the key that a table's key schema does not give
// it (more fields than the key has, a field that is not an integer, bytes past the key's end), so
// every write of such a key would fail.
var ErrSchemaMismatch = errors.New("salting: spec does not fit the key schema")

// CheckSchema says whether s can place every key of key schema ks, before a table is made with both:
// it is the one check that create, copy, import and rebucket share. A nil ks (keys brine does not
// encode) says nothing of the key's form, so only the spec's own checks apply then.
func CheckSchema(s Salter, ks *keys.Schema) error {
	if s == nil || ks == nil {
		return nil
	}
	if err := fits(s, ks); err != nil {
		return fmt.Errorf("%w: %q on key %q: %w", ErrSchemaMismatch, s.Spec(), ks, err)
	}
	return nil
}

// CheckScannable says whether a table salted by s can be read in full, in key order: a copy, a
// rebucket or a verify reads it so. reverse keeps key order only within one leading value.
func CheckScannable(s Salter) error {
	if s == nil {
		return nil
	}
	if _, err := s.BucketRanges(nil, nil); err != nil {
		return fmt.Errorf("%q: a table salted so cannot be scanned in full, nor copied or verified: %w", s.Spec(), err)
	}
	return nil
}

func fits(s Salter, ks *keys.Schema) error {
	switch s := s.(type) {
	case reverser:
		return s.lead.fits(ks)
	case *prefixed:
		switch st := s.st.(type) {
		case hashStrategy:
			return st.lead.fits(ks)
		case md5Strategy:
			return st.lead.fits(ks)
		case modStrategy:
			return st.fits(ks)
		case opentsdbStrategy:
			if n := minKeyLen(ks); n < st.metric+opentsdbTimestampBytes {
				return fmt.Errorf("its keys are as short as %d bytes; an OpenTSDB row key has at least %d", n, st.metric+opentsdbTimestampBytes)
			}
		}
	}
	return nil
}

func (l lead) fits(ks *keys.Schema) error {
	if l.mode == leadFields && l.n > ks.Len() {
		return fmt.Errorf("fields=%d, but the key has %d field(s)", l.n, ks.Len())
	}
	return nil
}

func (m modStrategy) fits(ks *keys.Schema) error {
	if !m.byField {
		if n := minKeyLen(ks); m.offset+m.width > n {
			return fmt.Errorf("mod reads bytes %d..%d, but its keys are as short as %d bytes", m.offset, m.offset+m.width-1, n)
		}
		return nil
	}
	if m.field >= ks.Len() {
		return fmt.Errorf("field=k%d, but the key has %d field(s), k0 to k%d", m.field, ks.Len(), ks.Len()-1)
	}
	if f := ks.Fields()[m.field]; f.Kind != keys.KindInt64 && f.Kind != keys.KindUint64 {
		return fmt.Errorf("field=k%d is %s (%s), not an int64 or uint64", m.field, f.Name, f.Kind)
	}
	return nil
}

// minKeyLen is the length of the shortest key of ks: every field at its shortest value.
func minKeyLen(ks *keys.Schema) int {
	fields := ks.Fields()
	vals := make([]any, len(fields))
	for i, f := range fields {
		switch f.Kind {
		case keys.KindInt64:
			vals[i] = int64(0)
		case keys.KindUint64:
			vals[i] = uint64(0)
		default:
			vals[i] = ""
		}
	}
	k, err := ks.Encode(vals...)
	if err != nil {
		return 0 // cannot happen for a valid schema; 0 refuses any offset
	}
	return len(k)
}
