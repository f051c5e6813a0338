package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// A batch of conditional writes goes as one Multi RPC per region, one RegionAction per row: atomic,
// holding the row's mutation and its condition, as HBase's Java client sends
// Table.checkAndMutate(List). The server answers each RegionAction on its own, in order: processed
// says whether the condition held, and an exception fails that row alone. gohbase's protobufs
// (Client.proto of its cfe2cb9, 2026-06-12) still lack both fields (RegionAction.condition = 4,
// RegionActionResult.processed = 3), so they travel as raw fields, which its messages keep through
// marshalling. Every other field the driver reads is one of pb's.
const (
	regionActionCondition    protowire.Number = 4
	regionActionResProcessed protowire.Number = 3
)

// CheckAndMutateBatch sends the rows as Multi calls of one region each (at most 1,000 rows, 4 MiB),
// Options.Concurrency at a time. A row the server answers with an exception that says its region
// moved or was busy was not applied; it is sent again alone, as CheckAndMutate, which gohbase
// re-routes and retries (durably, even if Deferred). Deletes are stamped as CheckAndMutate stamps
// them (a read first).
func (b *Backend) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	if err := checkTable(table); err != nil {
		return nil, nil, err
	}
	if err := driverkit.CheckBatch(ms, MaxKeyLen); err != nil {
		return nil, nil, fmt.Errorf("hbase: check and mutate batch %q: %w", table, err)
	}
	muts := make([]backends.Mutation, len(ms))
	conds := make([][]byte, len(ms))
	deferred := make([]bool, len(ms))
	for i, cm := range ms {
		if err := checkMutation(cm.Mut); err != nil {
			return nil, nil, fmt.Errorf("hbase: check and mutate batch %q: row %d: %w", table, i, err)
		}
		if err := checkFamily(cm.Cond.Family); err != nil {
			return nil, nil, fmt.Errorf("hbase: check and mutate batch %q: row %d: condition: %w", table, i, err)
		}
		c, err := conditionProto(cm.Cond, cm.Mut.Key)
		if err != nil {
			return nil, nil, fmt.Errorf("hbase: check and mutate batch %q: row %d: %w", table, i, err)
		}
		muts[i], conds[i], deferred[i] = cm.Mut, c, cm.Deferred
	}
	out := &condOutcomes{applied: make([]bool, len(ms)), errs: make([]error, len(ms))}
	stamps, err := b.deleteStamps(ctx, table, muts, out)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]int, 0, len(ms))
	for i := range ms {
		if out.errs[i] == nil {
			rows = append(rows, i)
		}
	}
	slices.SortFunc(rows, func(x, y int) int { return bytes.Compare(muts[x].Key, muts[y].Key) })
	batch := &condBatch{table: table, muts: muts, conds: conds, deferred: deferred, stamps: stamps, out: out}
	if len(rows) > 1 && slices.Contains(deferred, false) {
		batch.syncFamily = b.syncFamily(ctx, table) // only a call that may need a barrier asks the master
	}
	resend := b.sendCondGroups(ctx, batch, rows)
	var g errgroup.Group
	g.SetLimit(b.opts.Concurrency)
	for _, i := range resend {
		g.Go(func() error {
			out.applied[i], out.errs[i] = b.CheckAndMutate(ctx, table, ms[i].Cond, ms[i].Mut)
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through out
	return driverkit.BatchOutcome(ctx, table, out.applied, out.errs)
}

// condOutcomes are the per-row answers, each row set by one goroutine.
type condOutcomes struct {
	applied []bool
	errs    []error
}

// condBatch is what every Multi call of one CheckAndMutateBatch reads.
type condBatch struct {
	table      string
	muts       []backends.Mutation
	conds      [][]byte // each row's pb.Condition, marshalled
	deferred   []bool   // CondMutation.Deferred: sent with ASYNC_WAL, needing no barrier
	syncFamily string   // the family of the calls' WAL sync barriers (condsync.go); "": no barriers
	stamps     []int64  // a delete's stamp (0: nothing to delete, the server's clock)
	out        *condOutcomes
}

// conditionProto is cond as HBase's Condition on row, marshalled: the newest version of the column
// equals the value (an empty value: the column is absent or empty).
func conditionProto(cond backends.Condition, row []byte) ([]byte, error) {
	cmp, err := filter.NewBinaryComparator(filter.NewByteArrayComparable(cond.Value)).ConstructPBComparator()
	if err != nil {
		return nil, err
	}
	return proto.Marshal(&pb.Condition{
		Row: row, Family: []byte(cond.Family), Qualifier: []byte(cond.Qualifier),
		CompareType: pb.CompareType_EQUAL.Enum(), Comparator: cmp,
	})
}

// deleteStamps reads the rows of the batch's deletes, Options.Concurrency at a time, for their stamps
// (deleteStamp). A row whose read fails gets that error and is not sent; when every read failed for a
// missing table, that is the call's error.
func (b *Backend) deleteStamps(ctx context.Context, table string, muts []backends.Mutation, out *condOutcomes) ([]int64, error) {
	stamps := make([]int64, len(muts))
	var g errgroup.Group
	g.SetLimit(b.opts.Concurrency)
	for i, m := range muts {
		if !m.Delete {
			continue
		}
		g.Go(func() error {
			cn, rctx, done := b.begin(ctx)
			defer done()
			var err error
			if stamps[i], err = deleteStamp(rctx, cn.client, table, m); err != nil {
				out.errs[i] = b.rpcErr(ctx, cn, "check and mutate batch", table, err)
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through stamps and out
	for _, err := range out.errs {
		if errors.Is(err, backends.ErrTableNotFound) {
			return nil, err
		}
	}
	return stamps, nil
}

// sendCondGroups sends rows (sorted by key) as Multi calls cut at the table's region boundaries and
// at maxMultiRows rows and maxMultiBytes, Options.Concurrency at a time, and returns the rows to send again alone.
func (b *Backend) sendCondGroups(ctx context.Context, batch *condBatch, rows []int) []int {
	var (
		mu     sync.Mutex
		resend []int
		stale  atomic.Bool
		g      errgroup.Group
	)
	g.SetLimit(b.opts.Concurrency)
	for _, group := range b.byRegion(ctx, batch.table, batch.muts, rows) {
		for len(group) > 0 {
			n := chunkLen(batch.muts, group)
			chunk := group[:n]
			group = group[n:]
			g.Go(func() error {
				left := b.sendConds(ctx, batch, chunk, &stale)
				mu.Lock()
				resend = append(resend, left...)
				mu.Unlock()
				return nil
			})
		}
	}
	_ = g.Wait() // the senders report through batch.out
	if stale.Load() {
		b.forgetRegions(batch.table)
	}
	return resend
}

// sendConds sends rows (sorted by key) as multiConds, each to the region holding its first row, until
// every row has an answer or is returned to be sent again alone. Rows past the end of the region
// gohbase routed a call to go in the next call, and mark the region cache stale.
func (b *Backend) sendConds(ctx context.Context, batch *condBatch, rows []int, stale *atomic.Bool) (resend []int) {
	for len(rows) > 0 {
		cn, rctx, done := b.begin(ctx)
		call := &multiCond{callBase: newCallBase(rctx, []byte(batch.table), batch.muts[rows[0]].Key), batch: batch, rows: rows}
		msg, err := cn.rpc.SendRPC(call)
		if err != nil {
			err = b.rpcErr(ctx, cn, "check and mutate batch", batch.table, err)
		}
		done()
		if err != nil {
			// The call may have reached the server: its rows' outcomes are unknown.
			for _, i := range rows {
				batch.out.errs[i] = err
			}
			return resend
		}
		n := int(call.sent.Load())
		resp, ok := msg.(*pb.MultiResponse)
		if !ok || n == 0 {
			// Cannot happen with a server that answers what it was asked; the per-row path decides.
			return append(resend, rows...)
		}
		answers, synced, err := multiProcessed(resp, n, call.barrier.Load())
		if synced != nil {
			b.syncFamilies.Delete(batch.table) // read the family again: the table may have been recreated
		}
		sends := call.sends.Load()
		for j, i := range rows[:n] {
			switch a := answers[j]; {
			case err != nil:
				batch.out.errs[i] = fmt.Errorf("hbase: check and mutate batch %q: %w", batch.table, err)
			case a.err == nil && !a.processed && sends > 1:
				// The condition failed on a call gohbase sent again after a sending failed: the
				// first sending may have applied the row, and its own write failed the condition.
				// The outcome is unknown, not "not applied" (a fresh row's put-if-absent was
				// answered "not applied" so under the chaos test's SIGKILLs).
				batch.out.errs[i] = fmt.Errorf("hbase: check and mutate batch %q: condition failed on a call sent %d times (an earlier sending failed, perhaps after the server had it): this call may have applied the row: %w",
					batch.table, sends, backends.ErrRetryable)
			case a.err == nil && a.processed && synced != nil:
				batch.out.errs[i] = fmt.Errorf("hbase: check and mutate batch %q: row applied, but the WAL sync after it failed: it may not be durable: %w",
					batch.table, wrapErr("check and mutate batch", batch.table, synced))
			case a.err == nil:
				batch.out.applied[i] = a.processed
			case classify(a.err) == kindRetryable:
				// The row's region action failed before its condition was tested: not applied.
				resend = append(resend, i)
				stale.Store(true)
			default:
				batch.out.errs[i] = wrapErr("check and mutate batch", batch.table, a.err)
			}
		}
		if n < len(rows) {
			stale.Store(true)
		}
		rows = rows[n:]
	}
	return resend
}

// multiCond is the conditional writes of one batch bound for the region holding the first of them,
// as one Multi RPC. rows are sorted by key; as with multiPut, the request holds the rows up to the
// routed region's end key and sent tells how many.
type multiCond struct {
	callBase
	batch   *condBatch
	rows    []int
	sent    atomic.Int64
	barrier atomic.Bool // the request ends with a WAL sync barrier (condsync.go)
	// sends counts the times gohbase routed the call to a region (SetRegion, once per sending):
	// more than once when a sending failed, a connection that failed after the call was written
	// among the causes (gohbase then sends it again, to wherever the region is by then).
	sends atomic.Int32
}

func (c *multiCond) SetRegion(r hrpc.RegionInfo) {
	c.sends.Add(1)
	c.callBase.SetRegion(r)
}

func (c *multiCond) Name() string               { return "Multi" }
func (c *multiCond) Description() string        { return "Multi" }
func (c *multiCond) NewResponse() proto.Message { return &pb.MultiResponse{} }

func (c *multiCond) ToProto() proto.Message {
	n := rowsInRegion(c.region, c.batch.muts, c.rows)
	c.sent.Store(int64(n))
	deferred := c.batch.deferred
	barrier := c.batch.syncFamily != "" && n > 1 && slices.ContainsFunc(c.rows[:n], func(i int) bool { return !deferred[i] })
	c.barrier.Store(barrier)
	region := c.regionSpecifier()
	actions := make([]*pb.RegionAction, n, n+1)
	for j, i := range c.rows[:n] {
		mp := mutationProto(c.batch.muts[i], c.batch.stamps[i])
		if barrier || deferred[i] {
			mp.Durability = pb.MutationProto_ASYNC_WAL.Enum()
		}
		ra := &pb.RegionAction{
			Region: region, Atomic: proto.Bool(true),
			Action: []*pb.Action{{Index: proto.Uint32(1), Mutation: mp}},
		}
		raw := protowire.AppendTag(nil, regionActionCondition, protowire.BytesType)
		ra.ProtoReflect().SetUnknown(protowire.AppendBytes(raw, c.batch.conds[i]))
		actions[j] = ra
	}
	if barrier {
		actions = append(actions, &pb.RegionAction{Region: region,
			Action: []*pb.Action{{Index: proto.Uint32(1), Mutation: barrierMutation(c.batch.muts[c.rows[0]].Key, c.batch.syncFamily)}}})
	}
	return &pb.MultiRequest{RegionAction: actions}
}

// condAnswer is the server's answer to one row's RegionAction.
type condAnswer struct {
	processed bool  // the condition held and the mutation was applied
	err       error // the RegionAction's exception (its region's, or the row's own)
}

// multiProcessed reads a MultiResponse to a multiCond of n rows, one RegionActionResult per row in
// the order sent, then the barrier's when there is one: synced is its failure (nil: applied).
func multiProcessed(resp *pb.MultiResponse, n int, barrier bool) (answers []condAnswer, synced, err error) {
	results := resp.GetRegionActionResult()
	answers = make([]condAnswer, n)
	want := n
	if barrier {
		want++
	}
	if len(results) != want {
		return answers, nil, fmt.Errorf("multi response with %d region action results, sent %d", len(results), want)
	}
	for j, r := range results[:n] {
		if ex := r.GetException(); ex != nil {
			answers[j].err = exceptionError(ex)
			continue
		}
		p, err := rawBool(r.ProtoReflect().GetUnknown(), regionActionResProcessed)
		if err != nil {
			return answers, nil, fmt.Errorf("region action result %d: %w", j, err)
		}
		answers[j].processed = p
	}
	if barrier {
		synced = barrierAnswer(results[n])
	}
	return answers, synced, nil
}

// rawBool reads the bool field num from a message's raw unknown fields; absent means false.
func rawBool(raw []byte, num protowire.Number) (bool, error) {
	v := false
	for len(raw) > 0 {
		n, typ, l := protowire.ConsumeTag(raw)
		if l < 0 {
			return false, protowire.ParseError(l)
		}
		raw = raw[l:]
		if n == num && typ == protowire.VarintType {
			x, l := protowire.ConsumeVarint(raw)
			if l < 0 {
				return false, protowire.ParseError(l)
			}
			v, raw = x != 0, raw[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, raw)
		if l < 0 {
			return false, protowire.ParseError(l)
		}
		raw = raw[l:]
	}
	return v, nil
}
