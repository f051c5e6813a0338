package bench

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/proccpu"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The index section's orders: indexRows per repeat (Rows when smaller), written by indexWriters
// goroutines, spread over indexSellers sellers; a query asks for indexQueryRows orders of one seller.
const (
	indexRows      = 2000
	indexWriters   = 16
	indexSellers   = 100
	indexQueryRows = 20
	// indexQueries caps the queries of each kind per repeat (Gets when smaller).
	indexQueries = 200
)

// IndexResult is what indexes cost: Puts of new orders into tables with 0, 1 and 2 indexes,
// and a query of one seller's orders by index against a hand-written two-table application.
type IndexResult struct {
	Rows    int              `json:"rows_per_repeat"`
	Writers int              `json:"writers"`
	Puts    []IndexPutResult `json:"puts"`
	Queries int              `json:"queries_per_kind"`
	// QueryRows is the orders each query returns.
	QueryRows int `json:"rows_per_query"`
	// CoveredP50us: by_seller answering from its covered column; RowsP50us: by_seller with the main
	// rows; HandP50us: the raw driver's index-table scan, then one read of the main rows.
	CoveredP50us    float64 `json:"covered_p50_us"`
	RowsP50us       float64 `json:"with_rows_p50_us"`
	HandP50us       float64 `json:"hand_written_p50_us"`
	CoveredOverHand float64 `json:"covered_over_hand_written"`
	RowsOverHand    float64 `json:"with_rows_over_hand_written"`
	// Import is Table.Import of new orders into the tables with no index and with 2.
	Import *IndexImportResult `json:"import,omitempty"`
	// Exclusive is the exclusive bulk mode against a plain Import.
	Exclusive *ExclusiveResult `json:"exclusive,omitempty"`
}

// IndexImportResult is Import of the same new orders into the table without index and into the one
// with 2 indexes (medians over the repeats; calls over them all).
type IndexImportResult struct {
	Rows           int     `json:"rows_per_repeat"`
	PlainRowsPerS  float64 `json:"plain_rows_per_s"`
	IndexRowsPerS  float64 `json:"indexed_rows_per_s"`
	IndexOverPlain float64 `json:"indexed_over_plain"`
	// IndexOverBaseline is the indexed rate over the first measured one, IndexImportBaseline.
	IndexOverBaseline float64 `json:"indexed_over_first_measured"`
	// CallsPerRow is the indexed Import's store calls per order (a batched conditional write is one).
	CallsPerRow float64 `json:"indexed_store_calls_per_row"`
	// PlainServerCPU and IndexServerCPU are the CPU the store's server processes spent per row, in
	// µs (medians; only with Config.ServerPIDs).
	PlainServerCPU float64 `json:"plain_server_cpu_us_per_row,omitempty"`
	IndexServerCPU float64 `json:"indexed_server_cpu_us_per_row,omitempty"`
}

// IndexImportBaseline is the indexed Import's rows/s as first measured, before its writes were
// batched: 100k orders with 2 indexes, `make bench`'s standalone HBase on a 2-core machine, the best
// of its runs (1,267–1,767).
const IndexImportBaseline = 1767

// IndexPutResult is the Puts into one table (medians over the repeats; calls and rows over them all).
type IndexPutResult struct {
	Indexes     int     `json:"indexes"`
	RowsPerS    float64 `json:"rows_per_s"`
	OverNoIndex float64 `json:"over_no_index"`
	// CallsPerPut is backend calls per Put (reads, applies, check-and-mutates, scans); RowsPerPut is
	// rows written per Put: the write amplification.
	CallsPerPut float64 `json:"store_calls_per_put"`
	RowsPerPut  float64 `json:"rows_written_per_put"`
}

// CheckAndMutate, Increment and CheckAndMutateBatch count the row-atomic calls, which index writes
// and rebucket copies make, and pass them to the driver: its own batches are what a run measures.
func (c *counting) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	c.cams.Add(1)
	return c.Backend.CheckAndMutate(ctx, table, cond, m)
}

func (c *counting) Increment(ctx context.Context, table string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	c.incs.Add(1)
	return c.Backend.Increment(ctx, table, key, incs)
}

func (c *counting) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	c.condBatches.Add(1)
	c.condRows.Add(int64(len(ms)))
	return c.Backend.CheckAndMutateBatch(ctx, table, ms)
}

// orderIndexes mirror the guides' order example (client/indextest): by seller, newest first, the
// amount covered; by buyer.
func orderIndexes() ([]client.IndexConfig, error) {
	bySeller, err := salting.ParseSpec("hash:4:fields=1")
	if err != nil {
		return nil, err
	}
	byBuyer, err := salting.ParseSpec("hash:3")
	if err != nil {
		return nil, err
	}
	return []client.IndexConfig{
		{Name: "by_seller", Salter: bySeller, Covered: []client.Column{{Family: family, Qualifier: "amount"}},
			Parts: []client.IndexPart{client.ColumnPart(family, "seller"), client.ColumnPart(family, "ts").Descending(), client.KeyPart(0)}},
		{Name: "by_buyer", Salter: byBuyer, Parts: []client.IndexPart{client.ColumnPart(family, "buyer")}},
	}, nil
}

func orderKey(rep, i int) []byte {
	return keys.AppendText(nil, keys.KindString, fmt.Sprintf("o%02d%08d", rep, i))
}

func sellerOf(i int) []byte { return fmt.Appendf(nil, "s%03d", i%indexSellers) }

func orderCells(i int) []client.Cell {
	return []client.Cell{
		{Family: family, Qualifier: "seller", Value: sellerOf(i)},
		{Family: family, Qualifier: "buyer", Value: fmt.Appendf(nil, "b%04d", i%1000)},
		{Family: family, Qualifier: "ts", Value: binary.BigEndian.AppendUint64(nil, uint64(i))},
		{Family: family, Qualifier: "amount", Value: fmt.Appendf(nil, "%d", i%997)},
	}
}

// index runs the index section: it needs a driver with row-atomic operations.
func (r *runner) index(ctx context.Context) error {
	n := min(r.cfg.Rows, indexRows)
	c := client.New(r.count, append([]client.Option{client.WithLogger(r.log)}, r.cfg.ClientOptions...)...)
	all, err := orderIndexes()
	if err != nil {
		return err
	}
	salter, err := salting.ParseSpec("hash:8")
	if err != nil {
		return err
	}
	var tables [3]*client.Table // with 0, 1 and 2 indexes
	for k := range tables {
		name := TablePrefix + "orders" + strconv.Itoa(k) + "_" + r.suffix
		cfg := client.TableConfig{Salter: salter, Indexes: all[:k]}
		if tables[k], err = c.CreateTable(ctx, name, cfg); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		r.viaClient = append(r.viaClient, name)
	}
	res := &IndexResult{Rows: n, Writers: indexWriters, QueryRows: min(indexQueryRows, (n+indexSellers-1)/indexSellers)}
	r.log.Info("bench: indexed puts", "rows", n, "writers", indexWriters)
	rates := make([][]float64, len(tables))
	var used [3]counts
	for rep := range r.cfg.Repeat {
		// Rotate the order so that each table is written first, second and third in turn.
		for j := range tables {
			k := (j + rep) % len(tables)
			before := r.count.snapshot()
			el, err := indexPuts(ctx, tables[k], rep, n)
			if err != nil {
				return err
			}
			used[k] = used[k].add(r.count.snapshot().sub(before))
			rates[k] = append(rates[k], RowsPerSecond(int64(n), el))
		}
	}
	puts := float64(n * r.cfg.Repeat)
	for k := range tables {
		u := used[k]
		p := IndexPutResult{
			Indexes: k, RowsPerS: Median(rates[k]),
			CallsPerPut: float64(u.calls()) / puts,
			RowsPerPut:  float64(u.rowsWritten()) / puts,
		}
		p.OverNoIndex = Ratio(p.RowsPerS, Median(rates[0]))
		res.Puts = append(res.Puts, p)
	}
	bySeller, err := tables[1].Index("by_seller")
	if err != nil {
		return err
	}
	if err := r.indexQueries(ctx, res, bySeller, n); err != nil {
		return err
	}
	if res.Import, err = r.indexImports(ctx, tables[0], tables[2]); err != nil {
		return err
	}
	if res.Exclusive, err = r.exclusive(ctx, all); err != nil {
		return err
	}
	res.Exclusive.ProtocolOverPlain = res.Import.IndexOverPlain
	res.Exclusive.ExclusiveOverProto = Ratio(res.Exclusive.ImportRowsPerS, res.Import.IndexRowsPerS)
	r.rep.Index = res
	return nil
}

// indexPuts writes orders [0, n) of repeat rep into t from indexWriters goroutines.
func indexPuts(ctx context.Context, t client.TableAPI, rep, n int) (time.Duration, error) {
	return parallelN(ctx, n, indexWriters, func(ctx context.Context, i int) error {
		if err := t.Put(ctx, orderKey(rep, i), orderCells(i)...); err != nil {
			return fmt.Errorf("bench: put order %d into %s: %w", i, t.Name(), err)
		}
		return nil
	})
}

// indexImports times Import of the same new orders (BulkRows per repeat, keys the Puts did not
// use) into plain and into indexed, alternating which goes first.
func (r *runner) indexImports(ctx context.Context, plain, indexed client.TableAPI) (*IndexImportResult, error) {
	n := r.cfg.bulkRows()
	r.log.Info("bench: indexed import", "rows", n)
	var plainRates, indexRates, plainCPU, indexCPU []float64
	var used counts
	for rep := range r.cfg.Repeat {
		orders := func(i int) client.Mutation {
			return client.Mutation{Key: orderKey(r.cfg.Repeat+rep, i), Cells: orderCells(i)}
		}
		for j := range 2 {
			t, rates, cpus := plain, &plainRates, &plainCPU
			if (j+rep)%2 == 1 {
				t, rates, cpus = indexed, &indexRates, &indexCPU
			}
			before := r.count.snapshot()
			cpu0, err := proccpu.Used(r.cfg.ServerPIDs...)
			if err != nil {
				return nil, err
			}
			began := time.Now()
			if _, err := r.importN(ctx, t, n, orders); err != nil {
				return nil, err
			}
			*rates = append(*rates, RowsPerSecond(int64(n), time.Since(began)))
			cpu1, err := proccpu.Used(r.cfg.ServerPIDs...)
			if err != nil {
				return nil, err
			}
			*cpus = append(*cpus, proccpu.PerRow(cpu1-cpu0, n))
			if t == indexed {
				used = used.add(r.count.snapshot().sub(before))
			}
		}
	}
	res := &IndexImportResult{Rows: n, PlainRowsPerS: Median(plainRates), IndexRowsPerS: Median(indexRates)}
	res.IndexOverPlain = Ratio(res.IndexRowsPerS, res.PlainRowsPerS)
	res.IndexOverBaseline = Ratio(res.IndexRowsPerS, IndexImportBaseline)
	res.CallsPerRow = Ratio(float64(used.calls()), float64(n*r.cfg.Repeat))
	if len(r.cfg.ServerPIDs) > 0 {
		res.PlainServerCPU, res.IndexServerCPU = Median(plainCPU), Median(indexCPU)
	}
	return res, nil
}

// indexQueries times the query of one seller's newest orders three ways. The hand-written
// application keeps an unsalted index table of [seller][ts desc][order] -> order key next to an
// unsalted main table, written without any protocol, and reads them with the driver directly.
func (r *runner) indexQueries(ctx context.Context, res *IndexResult, ix *client.Index, n int) error {
	b := r.store.Backend
	hmain, hidx := TablePrefix+"hand_main_"+r.suffix, TablePrefix+"hand_by_seller_"+r.suffix
	for _, name := range []string{hmain, hidx} {
		if err := b.CreateTable(ctx, name, backends.TableOptions{Families: []string{family}}); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		r.tables = append(r.tables, name)
	}
	const chunk = 1000
	for lo := 0; lo < n; lo += chunk {
		var mm, im []backends.Mutation
		for i := lo; i < min(lo+chunk, n); i++ {
			k := orderKey(0, i)
			mm = append(mm, backends.Mutation{Key: k, Cells: orderCells(i)})
			ik := keys.AppendText(nil, keys.KindBytes, sellerOf(i))
			ik = binary.BigEndian.AppendUint64(ik, ^uint64(i))
			im = append(im, backends.Mutation{Key: append(ik, k...), Cells: []backends.Cell{{Family: family, Qualifier: "k", Value: k}}})
		}
		for table, muts := range map[string][]backends.Mutation{hmain: mm, hidx: im} {
			rowErrs, err := b.Apply(ctx, table, muts)
			if err = cmp.Or(err, errors.Join(rowErrs...)); err != nil {
				return fmt.Errorf("bench: load %s: %w", table, err)
			}
		}
	}
	want := res.QueryRows
	check := func(kind string, seller []byte, got int) error {
		if got != want {
			return fmt.Errorf("bench: %s query of seller %s returned %d rows, want %d", kind, seller, got, want)
		}
		return nil
	}
	byIndex := func(kind string, opts ...client.ReadOption) func([]byte) error {
		return func(seller []byte) error {
			p, err := ix.Prefix(seller)
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			got := 0
			for row, err := range ix.Scan(ctx, client.PrefixRange(p), append(opts, client.Limit(want))...) {
				if err != nil {
					return fmt.Errorf("bench: %s query: %w", kind, err)
				}
				if len(row.Cells) == 0 {
					return fmt.Errorf("bench: %s query of seller %s: a row without cells", kind, seller)
				}
				got++
			}
			return check(kind, seller, got)
		}
	}
	hand := func(seller []byte) error {
		p := keys.AppendText(nil, keys.KindBytes, seller)
		var mk [][]byte
		for row, err := range b.Scan(ctx, hidx, backends.Range{Start: p, End: keys.PrefixEnd(p)}, backends.ScanOptions{Limit: want}) {
			if err != nil {
				return fmt.Errorf("bench: hand-written index scan: %w", err)
			}
			mk = append(mk, row.Cells[0].Value)
		}
		rows, err := b.Read(ctx, hmain, mk, backends.ReadOptions{})
		if err != nil {
			return fmt.Errorf("bench: hand-written main read: %w", err)
		}
		got := 0
		for _, row := range rows {
			if len(row.Cells) > 0 {
				got++
			}
		}
		return check("hand-written", seller, got)
	}
	kinds := []func([]byte) error{
		byIndex("covered", client.Columns(client.Column{Family: family, Qualifier: "amount"})),
		byIndex("with rows"),
		hand,
	}
	q := min(r.cfg.Gets, indexQueries)
	res.Queries = q
	sellers := min(n, indexSellers)
	lat := make([][]time.Duration, len(kinds))
	r.log.Info("bench: queries by index", "queries", q, "rows", want)
	for k := range kinds { // warm-up, and a check of every side's answer
		if err := kinds[k](sellerOf(0)); err != nil {
			return err
		}
	}
	for rep := range r.cfg.Repeat {
		for j := range kinds {
			k := (j + rep) % len(kinds)
			for i := range q {
				seller := sellerOf(i % sellers)
				began := time.Now()
				if err := kinds[k](seller); err != nil {
					return err
				}
				lat[k] = append(lat[k], time.Since(began))
			}
		}
	}
	res.CoveredP50us = us(MedianDuration(lat[0]))
	res.RowsP50us = us(MedianDuration(lat[1]))
	res.HandP50us = us(MedianDuration(lat[2]))
	res.CoveredOverHand = Ratio(res.CoveredP50us, res.HandP50us)
	res.RowsOverHand = Ratio(res.RowsP50us, res.HandP50us)
	return nil
}

func (l *IndexResult) markdown(p func(format string, args ...any)) {
	p("## Indexes: Puts with 0, 1, 2 indexes, and a query by index vs a hand-written two-table application\n\n")
	p("%d new orders per repeat from %d concurrent writers (hash:8; by_seller and by_buyer indexes).\n\n", l.Rows, l.Writers)
	p("| indexes | rows/s | over no index | store calls per Put | rows written per Put |\n|---:|---:|---:|---:|---:|\n")
	for _, u := range l.Puts {
		p("| %d | %.0f | %.2fx | %.2f | %.2f |\n", u.Indexes, u.RowsPerS, u.OverNoIndex, u.CallsPerPut, u.RowsPerPut)
	}
	p("\nQuery of one seller's %d newest orders (%d queries of each kind per repeat, p50):\n\n", l.QueryRows, l.Queries)
	p("| query | p50 | over hand-written |\n|---|---:|---:|\n")
	p("| index, covered column only | %.0f µs | %.2fx |\n", l.CoveredP50us, l.CoveredOverHand)
	p("| index, with the main rows | %.0f µs | %.2fx |\n", l.RowsP50us, l.RowsOverHand)
	p("| hand-written: raw index-table scan, then one read of the main rows | %.0f µs | 1.00x |\n\n", l.HandP50us)
	if im := l.Import; im != nil {
		p("`Import` of %d new orders per repeat (default workers):\n\n", im.Rows)
		p("| table | rows/s | over no index | over the first indexed Import's %d rows/s | store calls per row |\n|---|---:|---:|---:|---:|\n", IndexImportBaseline)
		p("| no index | %.0f | 1.00x | | |\n", im.PlainRowsPerS)
		p("| 2 indexes | %.0f | %.3fx | %.2fx | %.2f |\n\n", im.IndexRowsPerS, im.IndexOverPlain, im.IndexOverBaseline, im.CallsPerRow)
		if im.PlainServerCPU > 0 {
			p("The server processes spent %.1f µs of CPU per row on the plain `Import` and %.1f µs on the indexed one (%.1fx).\n\n",
				im.PlainServerCPU, im.IndexServerCPU, Ratio(im.IndexServerCPU, im.PlainServerCPU))
		}
	}
	if e := l.Exclusive; e != nil {
		e.markdown(p)
	}
}
