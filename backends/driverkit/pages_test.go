package driverkit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// pager serves rows 0..total-1 page by page and records the sizes it was asked for.
type pager struct {
	total, next int
	asked       []int
	failAt      int // page index that fails; -1 never
	cancel      func()
	cancelAt    int // page index after which cancel is called; -1 never
}

var errPage = errors.New("page failed")

func (p *pager) page(n int) ([]backends.Row, bool, error) {
	i := len(p.asked)
	p.asked = append(p.asked, n)
	if i == p.failAt {
		return nil, false, errPage
	}
	var rows []backends.Row
	for ; p.next < p.total && len(rows) < n; p.next++ {
		rows = append(rows, backends.Row{Key: fmt.Appendf(nil, "k%02d", p.next)})
	}
	if i == p.cancelAt {
		p.cancel()
	}
	return rows, p.next < p.total, nil
}

func TestScanPages(t *testing.T) {
	cases := []struct {
		name             string
		total            int
		batch, limit     int
		stopAfter        int // consumer breaks after this many rows; 0 never
		failAt, cancelAt int
		wantRows         int
		wantAsked        []int
		wantErr          error
	}{
		{name: "pages", total: 5, batch: 2, failAt: -1, cancelAt: -1, wantRows: 5, wantAsked: []int{2, 2, 2}},
		{name: "exact pages", total: 4, batch: 2, failAt: -1, cancelAt: -1, wantRows: 4, wantAsked: []int{2, 2}},
		// The limit is pushed down: a page never asks for more rows than can still be sent.
		{name: "limit in first page", total: 500, batch: 100, limit: 3, failAt: -1, cancelAt: -1, wantRows: 3, wantAsked: []int{3}},
		{name: "limit across pages", total: 500, batch: 4, limit: 10, failAt: -1, cancelAt: -1, wantRows: 10, wantAsked: []int{4, 4, 2}},
		{name: "consumer break", total: 50, batch: 4, stopAfter: 5, failAt: -1, cancelAt: -1, wantRows: 5, wantAsked: []int{4, 4}},
		{name: "page error", total: 50, batch: 4, failAt: 1, cancelAt: -1, wantRows: 4, wantAsked: []int{4, 4}, wantErr: errPage},
		{name: "ctx ends in a page", total: 50, batch: 4, failAt: -1, cancelAt: 1, wantRows: 4, wantAsked: []int{4, 4}, wantErr: context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := &pager{total: tc.total, failAt: tc.failAt, cancelAt: tc.cancelAt, cancel: cancel}
			var got []string
			err := driverkit.ScanPages(ctx, tc.batch, tc.limit, p.page, func(r backends.Row, err error) bool {
				if err != nil {
					t.Fatalf("ScanPages yielded an error %v; it must return it", err)
				}
				got = append(got, string(r.Key))
				return tc.stopAfter == 0 || len(got) < tc.stopAfter
			})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("ScanPages = %v, want %v", err, tc.wantErr)
			}
			if len(got) != tc.wantRows || !slices.Equal(p.asked, tc.wantAsked) {
				t.Fatalf("%d rows, pages asked %v; want %d rows, pages %v", len(got), p.asked, tc.wantRows, tc.wantAsked)
			}
			for i, k := range got {
				if want := fmt.Sprintf("k%02d", i); k != want {
					t.Fatalf("row %d is %s, want %s", i, k, want)
				}
			}
		})
	}
}
