package tablestore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// TestCheckAndMutateBatchRequests: a batch is BatchWriteRow requests of at most 200 rows with a
// condition per row; rows the service answers busy are sent again, a timed-out row is not (its
// write may have been applied, and a resent condition would then say it was not).
func TestCheckAndMutateBatchRequests(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, func(c *Config) { c.RowAttempts = 3; c.RetryBaseDelay = time.Millisecond; c.Concurrency = 1 })
	tbl := table(t, b, backends.TableOptions{})
	const n = 250
	batch := func(prefix string) []backends.CondMutation {
		ms := make([]backends.CondMutation, n)
		for i := range ms {
			ms[i] = backends.CondMutation{
				Cond: backends.Condition{Family: "d", Qualifier: "q"},
				Mut:  backends.Mutation{Key: fmt.Appendf(nil, "%s%03d", prefix, i), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("v"), Timestamp: ts()}}},
			}
		}
		return ms
	}
	tests := []struct {
		name     string
		code     string // the fault of row 1 of each request
		requests int
		failed   bool // row 1 ends with the code
	}{
		{"no fault", "", 2, false},
		{"busy once: resent", tablestoretest.CodeServerBusy, 3, false},
		{"timeout: not resent", tablestoretest.CodeTimeout, 2, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := batch(fmt.Sprintf("k%d/", i))
			srv.ResetStats()
			if tt.code != "" {
				faulted := false
				srv.InjectRowErrors(func(op, _ string, index int) *tablestoretest.Fault {
					if op == "BatchWriteRow" && index == 1 && !faulted {
						faulted = true
						return &tablestoretest.Fault{Code: tt.code}
					}
					return nil
				})
				defer srv.ClearFaults()
			}
			applied, rowErrs, err := b.CheckAndMutateBatch(t.Context(), tbl, ms)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Repeat([]bool{true}, n)
			want[1] = !tt.failed
			if !slices.Equal(applied, want) {
				t.Errorf("applied = %v, want every row but row 1 when it failed", applied)
			}
			switch {
			case tt.failed && (rowErrs == nil || otsCode(rowErrs[1]) != tt.code):
				t.Errorf("row errors %v, want %s for row 1", rowErrs, tt.code)
			case !tt.failed && rowErrs != nil:
				t.Errorf("row errors %v, want none", rowErrs)
			}
			st := srv.Stats()
			if st["BatchWriteRow"].Requests != tt.requests || st["UpdateRow"].Requests != 0 {
				t.Errorf("%d BatchWriteRow and %d UpdateRow requests, want %d and none", st["BatchWriteRow"].Requests, st["UpdateRow"].Requests, tt.requests)
			}
			// Sent again: the conditions of the rows applied fail, nothing is applied twice.
			wantAgain := -1 // the first row applied by the second batch
			if tt.failed {
				wantAgain = 1
			}
			again, rowErrs, err := b.CheckAndMutateBatch(t.Context(), tbl, ms)
			if err != nil || rowErrs != nil || slices.Index(again, true) != wantAgain || slices.Contains(again[2:], true) {
				t.Errorf("batch sent again = %v, %v, %v; want only a row never applied applied", again, rowErrs, err)
			}
		})
	}
}
