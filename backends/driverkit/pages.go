package driverkit

import (
	"context"

	"github.com/brine-kv/brine/backends"
)

// ScanPages is the scan loop of the stores that read a range page by page (local and memory): it
// asks page for the next page of at most n rows and yields them in order. n is the batch size, less
// near limit (0: none): the limit is pushed down, so no page reads more rows than can still be sent.
// page reports whether rows may follow its own; it keeps its own place in the range.
//
// The loop stops at limit, at the consumer's break, after the last page, and when ctx ends (checked
// before every row and between pages). It returns the error that ends the scan, page's or ctx's, for
// the caller to wrap with its prefix and yield; nil when the scan ended cleanly or the consumer
// stopped.
func ScanPages(ctx context.Context, batch, limit int, page func(n int) ([]backends.Row, bool, error), yield func(backends.Row, error) bool) error {
	sent := 0
	for {
		n := batch
		if limit > 0 {
			n = min(n, limit-sent)
		}
		rows, more, err := page(n)
		if err != nil {
			return err
		}
		for _, row := range rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !yield(row, nil) {
				return nil
			}
			if sent++; limit > 0 && sent >= limit {
				return nil
			}
		}
		if !more {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
