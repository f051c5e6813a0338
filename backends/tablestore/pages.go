package tablestore

import (
	"bytes"
	"iter"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// RangeRow is a row GetRange returned inside the physical range being read, with its physical key.
type RangeRow struct {
	Key []byte
	Row *ots.Row
}

// PageRange reads the physical key range [lo, hi) (empty: unbounded) in crit's direction, from crit's
// bounds, following NextStartPrimaryKey: the one GetRange pager of the driver's Scan and the drop-in's
// GetRange. get sends page number page of the walk (crit with its StartPrimaryKey moved on; get sets
// Limit, checks ctx, counts capacity, wraps its errors); keyOf maps a returned primary key to its
// physical key. Both errors are yielded as they come, last.
//
// Bounds that cannot be mapped exactly let a few rows outside [lo, hi) through, always at the
// beginning or the end of the walk in its direction: the former are skipped, the first of the latter
// ends it. The caller counts what it keeps and stops ranging when it has enough.
func PageRange(crit ots.RangeRowQueryCriteria, lo, hi []byte,
	get func(page int, crit *ots.RangeRowQueryCriteria) (*ots.GetRangeResponse, error),
	keyOf func(*ots.PrimaryKey) ([]byte, error)) iter.Seq2[RangeRow, error] {
	reverse := crit.Direction == ots.BACKWARD
	return func(yield func(RangeRow, error) bool) {
		q := crit
		for page := 0; ; page++ {
			resp, err := get(page, &q)
			if err != nil {
				yield(RangeRow{}, err)
				return
			}
			for _, row := range resp.Rows {
				key, err := keyOf(row.PrimaryKey)
				if err != nil {
					yield(RangeRow{}, err)
					return
				}
				before := len(lo) > 0 && bytes.Compare(key, lo) < 0
				after := len(hi) > 0 && bytes.Compare(key, hi) >= 0
				switch {
				case !reverse && before, reverse && after:
					continue
				case !reverse && after, reverse && before:
					return
				}
				if !yield(RangeRow{Key: key, Row: row}, nil) {
					return
				}
			}
			if resp.NextStartPrimaryKey == nil || len(resp.NextStartPrimaryKey.PrimaryKeys) == 0 {
				return
			}
			q.StartPrimaryKey = resp.NextStartPrimaryKey
		}
	}
}
