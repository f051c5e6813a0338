package backends

import "fmt"

// CheckFamily refuses a family a table does not have, as HBase does, with ErrInvalidArgument.
// families is the table's set; nil means the table takes any family. Drivers that keep a table's
// families themselves call it for every cell written or deleted and every column read or scanned, so
// that all stores refuse the same requests.
func CheckFamily(families map[string]bool, family string) error {
	if families != nil && !families[family] {
		return fmt.Errorf("%w: no column family %q", ErrInvalidArgument, family)
	}
	return nil
}

// CheckColumnFamilies is CheckFamily for every column of a read.
func CheckColumnFamilies(families map[string]bool, cols []Column) error {
	for _, c := range cols {
		if err := CheckFamily(families, c.Family); err != nil {
			return err
		}
	}
	return nil
}
