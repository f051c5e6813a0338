package bench

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// The filter section's table: filterRows rows (Rows when smaller) on hash:8, of which every
// filterEvery-th (from the 7th) has status "hot": 1%.
const (
	filterRows  = 10_000
	filterEvery = 100
	filterHot   = 7
)

// FilterResult is a selective filter run by the store (client.RowFilter) against reading every row and
// filtering in the client, over the same logical range (medians over the repeats).
type FilterResult struct {
	Rows     int `json:"rows"`
	Buckets  int `json:"buckets"`
	Matching int `json:"matching"`
	// FilteredRowsPerS, ClientRowsPerS: the range's rows covered per second (Rows / median time).
	FilteredRowsPerS float64 `json:"filtered_rows_per_s"`
	ClientRowsPerS   float64 `json:"client_side_rows_per_s"`
	// TimeRatio is the client-side read's time over the filtered one's.
	TimeRatio float64 `json:"client_side_time_over_filtered"`
	// BackendRows* are the rows the backend yielded to the client; ServerRows* the rows the server sent
	// (-1: not observable on this store). The most of any repeat.
	FilteredBackendRows int64 `json:"filtered_backend_rows"`
	ClientBackendRows   int64 `json:"client_side_backend_rows"`
	FilteredServerRows  int64 `json:"filtered_server_rows"`
	ClientServerRows    int64 `json:"client_side_server_rows"`
}

// filter loads the status table (untimed) and reads it both ways, checking that both return exactly
// the matching rows.
func (r *runner) filter(ctx context.Context) error {
	n := min(r.cfg.Rows, filterRows)
	s, err := salting.ParseSpec("hash:8")
	if err != nil {
		return err
	}
	t, err := r.createTable(ctx, "filter", s, nil)
	if err != nil {
		return err
	}
	status := func(i int) []byte {
		if i%filterEvery == filterHot {
			return []byte("hot")
		}
		return []byte("new")
	}
	var want [][]byte
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			row := client.ImportRow{Mutation: client.Mutation{Key: Key(i), Cells: []client.Cell{
				{Family: family, Qualifier: "s", Value: status(i)}, {Family: family, Qualifier: qualifier, Value: r.value},
			}}}
			if !yield(row, nil) {
				return
			}
		}
	}
	for i := range n {
		if i%filterEvery == filterHot {
			want = append(want, Key(i))
		}
	}
	r.log.Info("bench: loading the filter table (untimed)", "rows", n)
	st, err := t.Import(ctx, rows, client.ImportOptions{Workers: r.cfg.ImportWorkers})
	if err != nil {
		return fmt.Errorf("bench: import into %s: %w", t.Name(), err)
	}
	if st.Written != int64(n) {
		return fmt.Errorf("bench: import into %s wrote %d of %d rows", t.Name(), st.Written, n)
	}
	col := client.Column{Family: family, Qualifier: "s"}
	hot := client.ValueFilter(col, client.Equal, []byte("hot"))
	rg := client.RowRange(Key(0), Key(n))
	res := &FilterResult{Rows: n, Buckets: s.Buckets(), Matching: len(want), FilteredServerRows: -1, ClientServerRows: -1}

	type side struct {
		name    string
		read    func() ([][]byte, error)
		backend *int64
		server  *int64
		elapsed []time.Duration
	}
	filtered := &side{name: "filtered", backend: &res.FilteredBackendRows, server: &res.FilteredServerRows,
		read: func() ([][]byte, error) { return collectKeys(t.Scan(ctx, rg, client.RowFilter(hot))) }}
	clientSide := &side{name: "client-side", backend: &res.ClientBackendRows, server: &res.ClientServerRows,
		read: func() ([][]byte, error) {
			var got [][]byte
			for row, err := range t.Scan(ctx, rg) {
				if err != nil {
					return nil, fmt.Errorf("bench: %w", err)
				}
				for _, c := range row.Cells {
					if c.Family == col.Family && c.Qualifier == col.Qualifier && bytes.Equal(c.Value, []byte("hot")) {
						got = append(got, row.Key)
					}
				}
			}
			return got, nil
		}}
	sides := []*side{filtered, clientSide}
	run := func(sd *side) error {
		before, wire := r.count.snapshot(), r.wireScanRows()
		began := time.Now()
		got, err := sd.read()
		el := time.Since(began)
		if err != nil {
			return err
		}
		if !slices.EqualFunc(got, want, bytes.Equal) {
			return fmt.Errorf("bench: %s read returned %d rows, want the %d matching", sd.name, len(got), len(want))
		}
		sd.elapsed = append(sd.elapsed, el)
		*sd.backend = max(*sd.backend, r.count.snapshot().sub(before).scanRows)
		if wire >= 0 {
			*sd.server = max(*sd.server, r.wireScanRows()-wire)
		}
		return nil
	}
	r.log.Info("bench: filtered vs client-side reads", "rows", n, "matching", len(want))
	for _, sd := range sides { // warm-up, and a check of both sides' results
		if err := run(sd); err != nil {
			return err
		}
		sd.elapsed = nil
	}
	// The filter with a limit, newest first: the last three matching rows.
	limited, err := collectKeys(t.Scan(ctx, rg, client.RowFilter(hot), client.Limit(3), client.Reverse()))
	if err != nil {
		return err
	}
	if len(want) >= 3 {
		if wantRev := [][]byte{want[len(want)-1], want[len(want)-2], want[len(want)-3]}; !slices.EqualFunc(limited, wantRev, bytes.Equal) {
			return fmt.Errorf("bench: filtered reverse scan, limit 3: %x, want %x", limited, wantRev)
		}
	}
	for rep := range r.cfg.Repeat {
		for j := range sides {
			if err := run(sides[(j+rep)%len(sides)]); err != nil {
				return err
			}
		}
	}
	tf, tc := MedianDuration(filtered.elapsed), MedianDuration(clientSide.elapsed)
	res.FilteredRowsPerS, res.ClientRowsPerS = RowsPerSecond(int64(n), tf), RowsPerSecond(int64(n), tc)
	res.TimeRatio = Ratio(float64(tc), float64(tf))
	r.rep.Filter = res
	return nil
}

func collectKeys(rows iter.Seq2[client.Row, error]) ([][]byte, error) {
	var got [][]byte
	for row, err := range rows {
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		got = append(got, row.Key)
	}
	return got, nil
}

func (f *FilterResult) markdown(p func(format string, args ...any)) {
	p("## Selective filter: %d of %d rows (hash:%d), filtered by the store vs read whole and filtered in the client\n\n", f.Matching, f.Rows, f.Buckets)
	server := func(n int64) string {
		if n < 0 {
			return "n/a"
		}
		return fmt.Sprint(n)
	}
	p("| read | range rows/s | rows from server | rows from backend |\n|---|---:|---:|---:|\n")
	p("| `client.RowFilter` (run by the store) | %.0f | %s | %d |\n", f.FilteredRowsPerS, server(f.FilteredServerRows), f.FilteredBackendRows)
	p("| every row, filtered in the client | %.0f | %s | %d |\n\n", f.ClientRowsPerS, server(f.ClientServerRows), f.ClientBackendRows)
	p("Client-side time over filtered time: %.2fx.\n\n", f.TimeRatio)
}
