package salting

import (
	"bytes"
	"fmt"

	"github.com/brine-kv/brine/keys"
)

// leadMode says which leading part of a key a strategy hashes or reverses (the guides' "userid").
type leadMode uint8

const (
	leadWhole  leadMode = iota // the whole key
	leadPrefix                 // prefix=L: the first L bytes (the whole key if shorter)
	leadFields                 // fields=K: the first K fields of a keys-encoded key
	leadSep                    // sep=B: the bytes before the first B (the whole key if none)
)

type lead struct {
	mode leadMode
	n    int  // L or K
	sep  byte // leadSep
}

// part returns the leading part of key. It does not allocate.
func (l lead) part(key []byte) ([]byte, error) {
	switch l.mode {
	case leadPrefix:
		if len(key) > l.n {
			return key[:l.n], nil
		}
	case leadFields:
		n, err := keys.FieldsLen(key, l.n)
		if err != nil {
			return nil, fmt.Errorf("%w: want a keys-encoded key with at least %d fields: %w", ErrInvalidKey, l.n, err)
		}
		return key[:n], nil
	case leadSep:
		if i := bytes.IndexByte(key, l.sep); i >= 0 {
			return key[:i], nil
		}
	}
	return key, nil
}

// group returns a prefix of start that every key sharing it has the same leading part as start, so a
// range from start that stays within the prefix touches one leading value; ok is false if start does
// not determine one (too short, no separator, or whole-key mode).
func (l lead) group(start []byte) (prefix []byte, ok bool) {
	switch l.mode {
	case leadPrefix:
		if len(start) >= l.n {
			return start[:l.n], true
		}
	case leadFields:
		// Fields are self-delimiting, so a key starting with these K complete fields has them as its
		// first K fields; except a Raw field, which runs to the end of the key and so grows in a
		// longer key ("r" + "000" is not the Raw field of "r").
		n, err := keys.FieldsLen(start, l.n)
		if err != nil {
			return nil, false
		}
		if sp, err := keys.FieldSpan(start, l.n-1); err != nil || sp.Kind == keys.KindRaw {
			return nil, false
		}
		return start[:n], true
	case leadSep:
		if i := bytes.IndexByte(start, l.sep); i >= 0 {
			return start[:i+1], true
		}
	}
	return nil, false
}

// suffix is the canonical spec option naming the leading part ("" for the whole key).
func (l lead) suffix() string {
	switch l.mode {
	case leadPrefix:
		return fmt.Sprintf(":prefix=%d", l.n)
	case leadFields:
		return fmt.Sprintf(":fields=%d", l.n)
	case leadSep:
		return ":sep=" + keys.FormatByte(l.sep)
	}
	return ""
}
