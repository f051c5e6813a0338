package hbase

import (
	"context"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// The calls below are RPCs gohbase has no helper for, or builds in a way brine cannot use.
// hrpc.Call is an interface of exported methods only, so any type can be sent through a client's
// SendRPC (gohbase.RPCClient), which routes it by Table/Key and retries it like gohbase's own calls.

// callBase holds what every hrpc.Call carries.
type callBase struct {
	ctx    context.Context
	table  []byte
	key    []byte
	region hrpc.RegionInfo
	result chan hrpc.RPCResult
}

func newCallBase(ctx context.Context, table, key []byte) callBase {
	return callBase{ctx: ctx, table: table, key: key, result: make(chan hrpc.RPCResult, 1)}
}

func (c *callBase) Table() []byte                   { return c.table }
func (c *callBase) Key() []byte                     { return c.key }
func (c *callBase) Region() hrpc.RegionInfo         { return c.region }
func (c *callBase) SetRegion(r hrpc.RegionInfo)     { c.region = r }
func (c *callBase) ResultChan() chan hrpc.RPCResult { return c.result }

func (c *callBase) Context() context.Context { return c.ctx }

func (c *callBase) regionSpecifier() *pb.RegionSpecifier {
	var name []byte
	if c.region != nil {
		name = c.region.Name()
	}
	return &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: name}
}

// masterCall is a MasterService RPC given as a request message, e.g. GetTableDescriptors.
type masterCall struct {
	callBase
	name    string
	req     proto.Message
	newResp func() proto.Message
}

func newMasterCall(ctx context.Context, name string, req proto.Message, newResp func() proto.Message) *masterCall {
	return &masterCall{callBase: newCallBase(ctx, nil, nil), name: name, req: req, newResp: newResp}
}

func (c *masterCall) Name() string               { return c.name }
func (c *masterCall) Description() string        { return c.name }
func (c *masterCall) ToProto() proto.Message     { return c.req }
func (c *masterCall) NewResponse() proto.Message { return c.newResp() }

// createTableCall is gohbase's CreateTable plus table attributes (where brine keeps TableOptions.Meta)
// and the table's own namespace: hrpc.CreateTable builds a TableSchema without attributes, in the
// default namespace.
type createTableCall struct {
	*hrpc.CreateTable
	attrs []*pb.BytesBytesPair
}

func (c *createTableCall) ToProto() proto.Message {
	req := c.CreateTable.ToProto().(*pb.CreateTableRequest)
	req.TableSchema.TableName = tableName(string(c.Table()))
	req.TableSchema.Attributes = append(req.TableSchema.Attributes, c.attrs...)
	return req
}

// cellMutate is one row's Put or Delete whose cells carry their own timestamps. hrpc.Mutate has one
// timestamp per call; splitting a row by timestamp would break the row's atomicity. It is sent as
// plain protobuf (no cell blocks) and never batched.
type cellMutate struct {
	callBase
	mutation *pb.MutationProto
}

func (c *cellMutate) Name() string               { return "Mutate" }
func (c *cellMutate) Description() string        { return "Mutate" }
func (c *cellMutate) NewResponse() proto.Message { return &pb.MutateResponse{} }

func (c *cellMutate) ToProto() proto.Message {
	return &pb.MutateRequest{Region: c.regionSpecifier(), Mutation: c.mutation}
}

// checkAndMutate is one row's put or delete sent with a condition (HBase's CheckAndMutate): gohbase's
// CheckAndPut takes puts only, with one timestamp for the call.
type checkAndMutate struct {
	cellMutate
	cond *pb.Condition
}

func (c *checkAndMutate) ToProto() proto.Message {
	return &pb.MutateRequest{Region: c.regionSpecifier(), Mutation: c.mutation, Condition: c.cond}
}

// openScan opens a region scanner whose start row differs from the key the call is routed by. A
// reverse scan must start at the region's end key (exclusive in effect: that row lives in the next
// region) while being routed to the region below it, which gohbase's Scan cannot express.
type openScan struct {
	*hrpc.Scan
	startRow []byte
}

func (c *openScan) ToProto() proto.Message {
	req := c.Scan.ToProto().(*pb.ScanRequest)
	if req.Scan != nil {
		req.Scan.StartRow = c.startRow
	}
	return req
}
