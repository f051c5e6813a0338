package hbase

import (
	"context"
	"fmt"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// One WAL sync per conditional Multi, not per row. HBase runs each conditional RegionAction of a
// Multi as a batch of its own (HRegion.checkAndMutate), synced before the next, in the one handler
// thread serving the call: a conditional row costs a WAL sync, where a plain Multi's rows share one.
// Measured on the standalone server, put-if-absent rows ran at 0.04–0.10× the rate of the same rows
// as plain puts (BenchmarkCheckAndMutateBatch).
//
// So the rows of a call of two or more go with Durability ASYNC_WAL (appended, not synced), and the
// call ends with a barrier: a plain RegionAction, synced. A region's WAL syncs in order (a sync up to
// an edit covers every edit appended before it), and the barrier is appended after every row of the
// call, in the same region, by the same handler: once the barrier is answered, every row the call
// applied is durable. A batch keeps CheckAndMutate's durability at one sync per call. If the barrier
// fails, the rows it was to cover are reported with an error (applied, not known to be durable).
//
// The barrier writes nothing a read sees: a delete of one version, stamped 1, of a column no write
// of brine's uses (syncQualifier), in a family of the table, on the call's first row. HBase writes a
// delete with an explicit stamp without reading the row, and a major compaction drops the marker.
const syncQualifier = "\x00brine.sync"

// barrierMutation is the barrier of a call to the region holding row.
func barrierMutation(row []byte, family string) *pb.MutationProto {
	return &pb.MutationProto{
		Row: row, MutateType: pb.MutationProto_DELETE.Enum(), Durability: pb.MutationProto_USE_DEFAULT.Enum(),
		ColumnValue: []*pb.MutationProto_ColumnValue{{
			Family: []byte(family),
			QualifierValue: []*pb.MutationProto_ColumnValue_QualifierValue{{
				Qualifier: []byte(syncQualifier), Timestamp: proto.Uint64(1),
				DeleteType: pb.MutationProto_DELETE_ONE_VERSION.Enum(),
			}},
		}},
	}
}

// syncFamily returns a family of table for its barriers, asking the master once per table. "" (no
// barrier: each row synced on its own, as CheckAndMutate) when the master cannot say.
func (b *Backend) syncFamily(ctx context.Context, table string) string {
	if f, ok := b.syncFamilies.Load(table); ok {
		return f.(string)
	}
	s, err := b.descriptor(ctx, table)
	if err != nil || len(s.GetColumnFamilies()) == 0 {
		b.log.DebugContext(ctx, "brine: conditional rows synced one by one", "table", table, "err", err)
		return ""
	}
	f := string(s.GetColumnFamilies()[0].GetName())
	b.syncFamilies.Store(table, f)
	return f
}

// barrierAnswer reads the barrier's RegionActionResult: nil when it was applied, and so synced.
func barrierAnswer(r *pb.RegionActionResult) error {
	if ex := r.GetException(); ex != nil {
		return exceptionError(ex)
	}
	roe := r.GetResultOrException()
	if len(roe) != 1 {
		return fmt.Errorf("WAL sync barrier answered with %d results, want 1", len(roe))
	}
	if ex := roe[0].GetException(); ex != nil {
		return exceptionError(ex)
	}
	return nil
}

// exceptionError is a Java exception of a Multi's answer as the error gohbase gives one, so that classify
// and wrapErr read it alike.
func exceptionError(ex *pb.NameBytesPair) error {
	return fmt.Errorf("HBase Java exception %s:\n%s", ex.GetName(), ex.GetValue())
}
