package driverkit

import (
	"fmt"

	"github.com/brine-kv/brine/backends"
)

// The row rules the embedded stores (local, memory) apply themselves, where a server applies its own,
// and the family checks every store that knows a table's families makes: one copy, so that the
// stores cannot drift apart. The version rules are in versions.go.

// CheckKey refuses an empty key and one longer than limit bytes (ErrInvalidKey).
func CheckKey(k []byte, limit int) error {
	switch {
	case len(k) == 0:
		return fmt.Errorf("%w: empty key", backends.ErrInvalidKey)
	case len(k) > limit:
		return fmt.Errorf("%w: key of %d bytes, the limit is %d", backends.ErrInvalidKey, len(k), limit)
	}
	return nil
}

// CheckMutation validates m before anything is written: its key (CheckKey with keyLimit), a put's
// cells (at least one), every cell's family (CheckFamily; families nil accepts any) and timestamp
// (not negative; 0 is the store's clock; a delete of one version names a column, not a family).
func CheckMutation(families map[string]bool, keyLimit int, m *backends.Mutation) error {
	if err := CheckKey(m.Key, keyLimit); err != nil {
		return err
	}
	if !m.Delete && len(m.Cells) == 0 {
		return fmt.Errorf("%w: put with no cells", backends.ErrInvalidArgument)
	}
	for i := range m.Cells {
		if err := CheckFamily(families, m.Cells[i].Family); err != nil {
			return err
		}
		if err := CheckStamp(m.Delete, &m.Cells[i]); err != nil {
			return err
		}
	}
	return nil
}

// CheckStamp refuses a timestamp a mutation's cell cannot carry: a negative one, or one on the
// delete of a whole family (a delete of one version names a column).
func CheckStamp(del bool, c *backends.Cell) error {
	switch {
	case c.Timestamp < 0:
		return fmt.Errorf("%w: negative timestamp %d", backends.ErrInvalidArgument, c.Timestamp)
	case del && c.Timestamp > 0 && c.Qualifier == "":
		return fmt.Errorf("%w: a delete of one version (timestamp %d) names a column; family %q has no qualifier", backends.ErrInvalidArgument, c.Timestamp, c.Family)
	}
	return nil
}

// Deletes reports whether a delete naming the column (family, qualifier) and timestamp ts (0: every
// version; else that one version) removes a stored cell of column (cellFamily, cellQualifier)
// stamped cellTS.
func Deletes[S ~string | ~[]byte, T ~string | ~[]byte](family, qualifier S, ts int64, cellFamily, cellQualifier T, cellTS int64) bool {
	return (ts == 0 || ts == cellTS) && Covers(family, qualifier, cellFamily, cellQualifier)
}

// Covers reports whether the column (family, qualifier) named by a read or a delete covers a stored
// cell's column: an empty qualifier names the whole family. S is string or []byte, as each store
// keeps names; the conversions below do not allocate.
func Covers[S ~string | ~[]byte, T ~string | ~[]byte](family, qualifier S, cellFamily, cellQualifier T) bool {
	return string(family) == string(cellFamily) && (len(qualifier) == 0 || string(qualifier) == string(cellQualifier))
}

// Selected reports whether a read limited to cols (none: every column) returns a cell of the column
// (family, qualifier).
func Selected[T ~string | ~[]byte](cols []backends.Column, family, qualifier T) bool {
	if len(cols) == 0 {
		return true
	}
	for i := range cols {
		if Covers(cols[i].Family, cols[i].Qualifier, family, qualifier) {
			return true
		}
	}
	return false
}

// CheckFamily refuses a family a table does not have, as HBase does, with ErrInvalidArgument.
// families is the table's set; nil means the table takes any family. Drivers that keep a table's
// families themselves call it for every cell written or deleted and every column read or scanned, so
// that all stores refuse the same requests.
func CheckFamily(families map[string]bool, family string) error {
	if families != nil && !families[family] {
		return fmt.Errorf("%w: no column family %q", backends.ErrInvalidArgument, family)
	}
	return nil
}

// CheckColumnFamilies is CheckFamily for every column of a read.
func CheckColumnFamilies(families map[string]bool, cols []backends.Column) error {
	for _, c := range cols {
		if err := CheckFamily(families, c.Family); err != nil {
			return err
		}
	}
	return nil
}
