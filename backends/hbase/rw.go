package hbase

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Read sends one Get per key, Options.Concurrency at a time (this gohbase has no batch call; calls in
// flight together still share MultiRequests). The first failure cancels the rest and is returned.
func (b *Backend) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if err := checkTable(table); err != nil {
		return nil, err
	}
	for i, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("hbase: read %q: key %d: %w", table, i, err)
		}
	}
	getOpts, trim, err := readOptions(opts)
	if err != nil {
		return nil, err
	}

	rows := make([]backends.Row, len(keys))
	get := func(ctx context.Context, i int) error {
		cn, rctx, done := b.begin(ctx)
		defer done()
		get, err := hrpc.NewGet(rctx, []byte(table), keys[i], getOpts...)
		if err != nil {
			return fmt.Errorf("hbase: read %q: %w", table, err)
		}
		res, err := cn.client.Get(get)
		if err != nil {
			return b.rpcErr(ctx, cn, "read", table, err)
		}
		rows[i] = rowFromCells(keys[i], pbCells(res))
		if trim != nil {
			rows[i].Cells = driverkit.TrimCells(trim, rows[i].Cells)
		}
		return nil
	}
	if len(keys) == 1 {
		// A point get, the common case: no goroutine or extra context, so it costs what a raw
		// gohbase Get costs.
		if err := get(ctx, 0); err != nil {
			return nil, err
		}
		return rows, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(b.opts.Concurrency)
	for i := range keys {
		g.Go(func() error { return get(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return rows, nil
}

// Apply writes the puts of two rows or more as one Multi call per region (multiput.go) and every
// other row, or a put the server answered with an exception, as one Mutate per row, Options.Concurrency
// calls at a time; a failed row does not stop the others. Rows that cannot be sent as given (bad key,
// family or timestamp) fail alone, before anything is sent. When no row succeeded because the table
// is missing or ctx ended, that is the call's error.
func (b *Backend) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	if err := checkTable(table); err != nil {
		return nil, err
	}
	out := &outcomes{errs: make([]error, len(muts))}
	var single, puts []int
	for i, m := range muts {
		switch err := checkMutation(m); {
		case err != nil:
			out.set(i, fmt.Errorf("hbase: apply %q: mutation %d: %w", table, i, err))
		case m.Delete:
			single = append(single, i)
		default:
			puts = append(puts, i)
		}
	}
	if len(puts) > 1 {
		single = append(single, b.putMulti(ctx, table, muts, puts, out)...)
	} else {
		single = append(single, puts...)
	}
	var g errgroup.Group
	g.SetLimit(b.opts.Concurrency)
	for _, i := range single {
		g.Go(func() error {
			out.set(i, b.mutate(ctx, table, muts[i]))
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through out
	if out.failed.Load() == 0 {
		return nil, nil
	}
	if out.succeeded.Load() == 0 {
		for _, err := range out.errs {
			if errors.Is(err, backends.ErrTableNotFound) {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hbase: apply %q: %w", table, err)
		}
	}
	return out.errs, nil
}

// checkMutation refuses what HBase would refuse, or what cannot be sent as given.
func checkMutation(m backends.Mutation) error {
	if err := checkKey(m.Key); err != nil {
		return err
	}
	if !m.Delete && len(m.Cells) == 0 {
		return fmt.Errorf("hbase: %w: put with no cells", backends.ErrInvalidArgument)
	}
	for _, c := range m.Cells {
		if err := checkFamily(c.Family); err != nil {
			return err
		}
		if err := driverkit.CheckStamp(m.Delete, &c); err != nil {
			return fmt.Errorf("hbase: %w", err)
		}
	}
	return nil
}

// mutate applies one row's mutation in one RPC (a delete reads the row first; see deleteRow).
func (b *Backend) mutate(ctx context.Context, table string, m backends.Mutation) error {
	cn, rctx, done := b.begin(ctx)
	defer done()
	var err error
	switch ts, uniform := sameTimestamp(m.Cells); {
	case m.Delete:
		err = deleteRow(rctx, cn, table, m)
	case uniform:
		err = putUniform(rctx, cn.client, table, m, ts)
	default:
		_, err = cn.rpc.SendRPC(&cellMutate{
			callBase: newCallBase(rctx, []byte(table), m.Key),
			mutation: mutationProto(m, 0),
		})
	}
	return b.rpcErr(ctx, cn, "apply", table, err)
}

// putUniform sends a put whose cells share one timestamp (0: the server's clock) through gohbase's
// Mutate, which can ride in a MultiRequest with other rows.
func putUniform(ctx context.Context, client gohbase.Client, table string, m backends.Mutation, ts int64) error {
	var opts []func(hrpc.Call) error
	if ts != 0 {
		opts = append(opts, hrpc.TimestampUint64(uint64(ts)))
	}
	values := make(map[string]map[string][]byte, 1)
	for _, c := range m.Cells {
		q := values[c.Family]
		if q == nil {
			q = map[string][]byte{}
			values[c.Family] = q
		}
		q[c.Qualifier] = c.Value
	}
	put, err := hrpc.NewPut(ctx, []byte(table), m.Key, values, opts...)
	if err != nil {
		return err
	}
	_, err = client.Put(put)
	return err
}

// deleteRow removes every version of what m names. An HBase delete sent without a timestamp covers
// only versions up to the server's clock, so cells stamped later (a client clock ahead of the
// server's, an explicit future version) would survive it. So the row's cells are read first and the
// delete is stamped with the newest version among them: it removes them all, and it hides no later
// write stamped after that version (a delete stamped far ahead would hide every write until then).
// Nothing to delete, nothing sent. A write racing the delete with an older stamp may be hidden, as
// with any HBase delete. A cell with a timestamp deletes that one version, read or not.
func deleteRow(ctx context.Context, cn *conn, table string, m backends.Mutation) error {
	newest, err := deleteStamp(ctx, cn.client, table, m)
	if err != nil {
		return err
	}
	if newest == 0 {
		// Unstamped, a delete of every version would hide writes up to the server's clock.
		m.Cells = slices.DeleteFunc(slices.Clone(m.Cells), func(c backends.Cell) bool { return c.Timestamp == 0 })
		if len(m.Cells) == 0 {
			return nil
		}
	}
	_, err = cn.rpc.SendRPC(&cellMutate{
		callBase: newCallBase(ctx, []byte(table), m.Key),
		mutation: mutationProto(m, newest),
	})
	return err
}

// deleteStamp returns the newest version among the cells the delete m removes, of every version
// (the cells of one version are not read); 0 when there are none.
func deleteStamp(ctx context.Context, client gohbase.Client, table string, m backends.Mutation) (int64, error) {
	cols := make([]backends.Column, 0, len(m.Cells))
	for _, c := range m.Cells {
		if c.Timestamp == 0 {
			cols = append(cols, backends.Column{Family: c.Family, Qualifier: c.Qualifier})
		}
	}
	if len(m.Cells) > 0 && len(cols) == 0 {
		return 0, nil
	}
	fams, err := familiesOption(cols)
	if err != nil {
		return 0, err
	}
	var opts []func(hrpc.Call) error
	if fams != nil {
		opts = append(opts, hrpc.Families(fams))
	}
	get, err := hrpc.NewGet(ctx, []byte(table), m.Key, opts...)
	if err != nil {
		return 0, err
	}
	res, err := client.Get(get)
	if err != nil {
		return 0, err
	}
	var newest int64
	for _, c := range rowFromCells(m.Key, pbCells(res)).Cells {
		newest = max(newest, c.Timestamp)
	}
	return newest, nil
}

// sameTimestamp reports whether all cells carry one timestamp, and which.
func sameTimestamp(cells []backends.Cell) (int64, bool) {
	if len(cells) == 0 {
		return 0, true
	}
	ts := cells[0].Timestamp
	for _, c := range cells[1:] {
		if c.Timestamp != ts {
			return 0, false
		}
	}
	return ts, true
}

// mutationProto builds a row mutation. A put carries a timestamp per cell (none for timestamp 0: the
// server's clock). A delete removes, up to deleteTS (0: the server's clock), all versions of each
// named column, of each family named by a cell with an empty qualifier, or of the whole row when no
// cell is named; a column's cell with a timestamp removes that one version.
func mutationProto(m backends.Mutation, deleteTS int64) *pb.MutationProto {
	typ := pb.MutationProto_PUT
	if m.Delete {
		typ = pb.MutationProto_DELETE
	}
	mp := &pb.MutationProto{Row: m.Key, MutateType: &typ, Durability: pb.MutationProto_USE_DEFAULT.Enum()}
	var stamp *uint64
	if m.Delete && deleteTS > 0 {
		stamp = proto.Uint64(uint64(deleteTS))
		mp.Timestamp = stamp
	}
	byFamily := map[string]*pb.MutationProto_ColumnValue{}
	for _, c := range m.Cells {
		cv := byFamily[c.Family]
		if cv == nil {
			cv = &pb.MutationProto_ColumnValue{Family: []byte(c.Family)}
			byFamily[c.Family] = cv
			mp.ColumnValue = append(mp.ColumnValue, cv)
		}
		qv := &pb.MutationProto_ColumnValue_QualifierValue{Qualifier: []byte(c.Qualifier)}
		switch {
		case m.Delete && c.Qualifier == "":
			// HBase's addFamily drops what the family's list held, so the family delete goes first.
			qv.Qualifier = nil
			qv.DeleteType = pb.MutationProto_DELETE_FAMILY.Enum()
			qv.Timestamp = stamp
			cv.QualifierValue = append([]*pb.MutationProto_ColumnValue_QualifierValue{qv}, cv.QualifierValue...)
			continue
		case m.Delete && c.Timestamp > 0:
			qv.DeleteType = pb.MutationProto_DELETE_ONE_VERSION.Enum()
			qv.Timestamp = proto.Uint64(uint64(c.Timestamp))
		case m.Delete:
			qv.DeleteType = pb.MutationProto_DELETE_MULTIPLE_VERSIONS.Enum()
			qv.Timestamp = stamp
		default:
			if c.Timestamp != 0 {
				qv.Timestamp = proto.Uint64(uint64(c.Timestamp))
			}
			qv.Value = c.Value
			if qv.Value == nil {
				qv.Value = []byte{}
			}
		}
		cv.QualifierValue = append(cv.QualifierValue, qv)
	}
	return mp
}
