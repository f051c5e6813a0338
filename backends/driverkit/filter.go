package driverkit

import "github.com/brine-kv/brine/backends"

// CheckRead validates a read's columns and filter against a table's families (nil: any family).
func CheckRead(families map[string]bool, opts backends.ReadOptions) error {
	if err := CheckColumnFamilies(families, opts.Columns); err != nil {
		return err
	}
	return opts.Filter.Check(opts.Columns)
}
