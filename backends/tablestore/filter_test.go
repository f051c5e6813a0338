package tablestore

import (
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestFilterWhereEvaluated counts the rows the service sends: a regex-free filter runs on the
// service, a regex in the driver (every row of the range sent), and a dense filter with a limit
// stops after the limit either way.
func TestFilterWhereEvaluated(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, nil)
	tbl := table(t, b, backends.TableOptions{})
	testkit.Apply(t, t.Context(), b, tbl, puts(300, ts(), "k")...)
	v := backends.Column{Family: "d", Qualifier: "v"}
	tests := []struct {
		name     string
		f        backends.Filter
		limit    int
		rows     int // returned
		sent     int // rows the service sent
		timeOpts bool
	}{
		{"comparison: on the service", backends.ValueFilter(v, backends.Equal, []byte("k00007")), 0, 1, 1, false},
		{"not, or: on the service", backends.Filter{Kind: backends.FilterNot, Subs: []backends.Filter{
			{Kind: backends.FilterOr, Subs: []backends.Filter{
				backends.ValueFilter(v, backends.Less, []byte("k00290")), backends.ValueFilter(v, backends.Equal, []byte("k00295")),
			}}}}, 0, 9, 9, false},
		{"regex: in the driver", backends.ValueRegexFilter(v, "^k0000[0-4]$"), 0, 5, 300, false},
		{"time range: in the driver", backends.ValueFilter(v, backends.Equal, []byte("k00007")), 0, 1, 300, true},
		{"dense regex, limit 5: stops", backends.ValueRegexFilter(v, "^k"), 5, 5, 5, false},
		{"dense comparison, limit 5: stops", backends.ValueFilter(v, backends.GreaterOrEqual, []byte("k00100")), 5, 5, 5, false},
	}
	for _, tt := range tests {
		srv.ResetStats()
		opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{Filter: &tt.f}, Limit: tt.limit}
		if tt.timeOpts {
			opts.TimeRange = backends.TimeRange{From: 1}
		}
		n := 0
		for _, err := range b.Scan(t.Context(), tbl, backends.Range{}, opts) {
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			n++
		}
		if sent := srv.Stats()["GetRange"].RowsRead; n != tt.rows || sent != tt.sent {
			t.Errorf("%s: %d rows returned, %d sent by the service; want %d and %d", tt.name, n, sent, tt.rows, tt.sent)
		}
	}
}
