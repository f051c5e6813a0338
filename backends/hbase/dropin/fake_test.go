package dropin

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

// fakeHBase is an in-memory gohbase.Client: enough of HBase's behaviour (rows by key, forward range
// scans, cells carrying their row) to check what the wrapper sends and what it hands back.
type fakeHBase struct {
	mu       sync.Mutex
	rows     map[string]map[string][]*hrpc.Cell // table -> physical key -> cells
	sent     []hrpc.Call                        // every request that reached the fake
	opened   int                                // scanners opened
	closed   int                                // scanners closed
	failKey  []byte                             // a scan whose range holds this key fails there
	wrongRow bool                               // Get answers with a cell of another row
	shut     int                                // calls of Close
	cached   []string                           // tables of CacheRegions calls
	// batchFail: a batched call of this (physical) key fails (SendBatch).
	batchFail []byte
}

var _ gohbase.Client = (*fakeHBase)(nil)

func newFake() *fakeHBase { return &fakeHBase{rows: map[string]map[string][]*hrpc.Cell{}} }

func (f *fakeHBase) record(c hrpc.Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, c)
}

func (f *fakeHBase) calls() []hrpc.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

func (f *fakeHBase) keys(table string) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for k := range f.rows[table] {
		out = append(out, []byte(k))
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

func cellsOf(key []byte, values map[string]map[string][]byte) []*hrpc.Cell {
	var cells []*hrpc.Cell
	for fam, qs := range values {
		for q, v := range qs {
			ts, typ := uint64(1), pb.CellType_PUT
			cells = append(cells, &hrpc.Cell{Row: bytes.Clone(key), Family: []byte(fam), Qualifier: []byte(q),
				Value: v, Timestamp: &ts, CellType: &typ})
		}
	}
	slices.SortFunc(cells, func(a, b *hrpc.Cell) int {
		if c := bytes.Compare(a.Family, b.Family); c != 0 {
			return c
		}
		return bytes.Compare(a.Qualifier, b.Qualifier)
	})
	return cells
}

func copyCells(cells []*hrpc.Cell) []*hrpc.Cell {
	out := make([]*hrpc.Cell, len(cells))
	for i, c := range cells {
		cc := hrpc.Cell{Family: c.Family, Qualifier: c.Qualifier, Value: c.Value, Timestamp: c.Timestamp, CellType: c.CellType}
		cc.Row = bytes.Clone(c.Row)
		out[i] = &cc
	}
	return out
}

func (f *fakeHBase) Get(g *hrpc.Get) (*hrpc.Result, error) {
	f.record(g)
	f.mu.Lock()
	defer f.mu.Unlock()
	cells := copyCells(f.rows[string(g.Table())][string(g.Key())])
	if f.wrongRow && len(cells) > 0 {
		cells[0].Row = append(cells[0].Row, 'x')
	}
	return &hrpc.Result{Cells: cells}, nil
}

func (f *fakeHBase) mutate(m *hrpc.Mutate) (*hrpc.Result, error) {
	f.record(m)
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.rows[string(m.Table())]
	if t == nil {
		t = map[string][]*hrpc.Cell{}
		f.rows[string(m.Table())] = t
	}
	switch m.Description() {
	case "DELETE":
		delete(t, string(m.Key()))
		return &hrpc.Result{}, nil
	case "APPEND":
		t[string(m.Key())] = cellsOf(m.Key(), m.Values())
		return &hrpc.Result{Cells: copyCells(t[string(m.Key())])}, nil
	}
	t[string(m.Key())] = cellsOf(m.Key(), m.Values())
	return &hrpc.Result{}, nil
}

func (f *fakeHBase) Put(p *hrpc.Mutate) (*hrpc.Result, error)    { return f.mutate(p) }
func (f *fakeHBase) Delete(d *hrpc.Mutate) (*hrpc.Result, error) { return f.mutate(d) }
func (f *fakeHBase) Append(a *hrpc.Mutate) (*hrpc.Result, error) { return f.mutate(a) }

func (f *fakeHBase) Increment(i *hrpc.Mutate) (int64, error) {
	f.record(i)
	return 7, nil
}

func (f *fakeHBase) CheckAndPut(p *hrpc.Mutate, family, qualifier string, expected []byte) (bool, error) {
	f.record(p)
	return true, nil
}

func (f *fakeHBase) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shut++
}

func (f *fakeHBase) closes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shut
}

func (f *fakeHBase) Scan(s *hrpc.Scan) hrpc.Scanner {
	f.record(s)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened++
	var keys []string
	for k := range f.rows[string(s.Table())] {
		if k >= string(s.StartRow()) && (len(s.StopRow()) == 0 || k < string(s.StopRow())) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	sc := &fakeScanner{f: f, s: s, fail: -1}
	for _, k := range keys {
		if f.failKey != nil && k == string(f.failKey) {
			sc.fail = len(sc.results)
			break
		}
		sc.results = append(sc.results, &hrpc.Result{Cells: copyCells(f.rows[string(s.Table())][k])})
	}
	return sc
}

type fakeScanner struct {
	f       *fakeHBase
	s       *hrpc.Scan
	results []*hrpc.Result
	fail    int // index at which Next fails; -1: never
	pos     int
	closed  bool
}

var errFakeScan = errors.New("fake: region server gone")

func (sc *fakeScanner) Next() (*hrpc.Result, error) {
	if err := sc.s.Context().Err(); err != nil {
		sc.Close()
		return nil, err
	}
	if sc.pos == sc.fail {
		sc.Close()
		return nil, errFakeScan
	}
	if sc.closed || sc.pos >= len(sc.results) {
		sc.Close()
		return nil, io.EOF
	}
	sc.pos++
	return sc.results[sc.pos-1], nil
}

func (sc *fakeScanner) Close() error {
	if !sc.closed {
		sc.closed = true
		sc.f.mu.Lock()
		sc.f.closed++
		sc.f.mu.Unlock()
	}
	return nil
}
