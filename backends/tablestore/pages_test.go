package tablestore

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// TestPageRange: pages are followed through NextStartPrimaryKey, rows before the range are skipped,
// the first row past it ends the walk, the consumer's break stops paging, and errors come last.
func TestPageRange(t *testing.T) {
	pk := func(k string) *ots.PrimaryKey {
		p := new(ots.PrimaryKey)
		p.AddPrimaryKeyColumn("k", []byte(k))
		return p
	}
	keyOf := func(p *ots.PrimaryKey) ([]byte, error) {
		if string(p.PrimaryKeys[0].Value.([]byte)) == "bad" {
			return nil, errors.New("bad key")
		}
		return p.PrimaryKeys[0].Value.([]byte), nil
	}
	tests := []struct {
		name    string
		pages   [][]string // the rows each page returns, in the walk's direction
		reverse bool
		lo, hi  string
		take    int // rows the consumer takes before breaking; 0: all
		want    []string
		wantErr string
		sent    int // pages requested
	}{
		{"two pages", [][]string{{"a", "b"}, {"c"}}, false, "", "", 0, []string{"a", "b", "c"}, "", 2},
		{"loose bounds", [][]string{{"a", "b"}, {"c", "d"}}, false, "b", "d", 0, []string{"b", "c"}, "", 2},
		{"reverse", [][]string{{"d", "c"}, {"b", "a"}}, true, "b", "d", 0, []string{"c", "b"}, "", 2},
		{"break", [][]string{{"a", "b"}, {"c"}}, false, "", "", 1, []string{"a"}, "", 1},
		{"key error", [][]string{{"a", "bad", "c"}}, false, "", "", 0, []string{"a"}, "bad key", 1},
		{"page error", [][]string{{"a"}, nil}, false, "", "", 0, []string{"a"}, "page 1 failed", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sent := 0
			get := func(page int, crit *ots.RangeRowQueryCriteria) (*ots.GetRangeResponse, error) {
				sent++
				if page != sent-1 {
					t.Fatalf("page %d requested as request %d", page, sent)
				}
				if page > 0 && string(crit.StartPrimaryKey.PrimaryKeys[0].Value.([]byte)) != fmt.Sprint("next", page) {
					t.Fatalf("page %d starts at %v, want the previous page's NextStartPrimaryKey", page, crit.StartPrimaryKey.PrimaryKeys[0].Value)
				}
				if tc.pages[page] == nil {
					return nil, fmt.Errorf("page %d failed", page)
				}
				resp := &ots.GetRangeResponse{}
				for _, k := range tc.pages[page] {
					resp.Rows = append(resp.Rows, &ots.Row{PrimaryKey: pk(k)})
				}
				if page+1 < len(tc.pages) {
					resp.NextStartPrimaryKey = pk(fmt.Sprint("next", page+1))
				}
				return resp, nil
			}
			crit := ots.RangeRowQueryCriteria{Direction: ots.FORWARD}
			if tc.reverse {
				crit.Direction = ots.BACKWARD
			}
			var got []string
			var gotErr error
			for rr, err := range PageRange(crit, []byte(tc.lo), []byte(tc.hi), get, keyOf) {
				if err != nil {
					gotErr = err
					break
				}
				got = append(got, string(rr.Key))
				if len(got) == tc.take {
					break
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rows %q, want %q", got, tc.want)
			}
			if (gotErr == nil) != (tc.wantErr == "") || (gotErr != nil && gotErr.Error() != tc.wantErr) {
				t.Errorf("error %v, want %q", gotErr, tc.wantErr)
			}
			if sent != tc.sent {
				t.Errorf("%d pages requested, want %d", sent, tc.sent)
			}
		})
	}
}
