package hbase

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// Bulk load: store files (HFile v3, internal/hfile) handed to the region that will serve their
// rows, with HBase's BulkLoadHFile RPC, as completebulkload and BulkLoadHFilesTool hand them. The
// region server validates each file (its family, and that its first and last keys lie in the
// region) and moves it into the family's store (on HDFS; from another file system, or a local one,
// it copies it: the files in the staging directory are then the loader's to remove), all files of
// one call or none. Nothing goes through
// the WAL or the memstore: that is what makes it fast, and why replication does not see the rows
// unless the cluster replicates bulk loads (hbase.replication.bulkload.enabled).
//
// This is the path without a bulk token, which a cluster without Kerberos takes: the region server
// reads the files with its own file system (a local directory it can see, or the cluster's HDFS)
// under its own user. The secure path (PrepareBulkLoad / CleanupBulkLoad, a staging directory the
// server owns) is for clusters that need it.

// errNotLoaded: the region server answered loaded=false, a failure it could recover from (the
// region is closing or splitting): send the files again to the region that serves their keys now.
var errNotLoaded = errors.New("hbase: bulk load: the region server did not load the files (region closing or splitting)")

// storeFile is one store file to load and its column family.
type storeFile struct {
	family string
	path   string // as the region server's file system names it: file:///..., hdfs://...
}

// bulkLoadCall is one BulkLoadHFile RPC, routed to the region holding key (the files' first row).
type bulkLoadCall struct {
	callBase
	files        []storeFile
	assignSeqNum bool
}

func (c *bulkLoadCall) Name() string               { return "BulkLoadHFile" }
func (c *bulkLoadCall) Description() string        { return "BulkLoadHFile" }
func (c *bulkLoadCall) NewResponse() proto.Message { return &pb.BulkLoadHFileResponse{} }

func (c *bulkLoadCall) ToProto() proto.Message {
	paths := make([]*pb.BulkLoadHFileRequest_FamilyPath, len(c.files))
	for i, f := range c.files {
		paths[i] = &pb.BulkLoadHFileRequest_FamilyPath{Family: []byte(f.family), Path: proto.String(f.path)}
	}
	return &pb.BulkLoadHFileRequest{Region: c.regionSpecifier(), FamilyPath: paths, AssignSeqNum: proto.Bool(c.assignSeqNum)}
}

// loadStoreFiles hands files, whose rows all lie in the region holding key, to that region in one
// BulkLoadHFile RPC. With assignSeqNum the region gives the files a sequence id above every edit it
// holds, so a loaded cell wins over a put of the same row, column and timestamp made before the
// load; without it the files keep sequence id 0 and such a put wins (tested in
// bulkload_integration_test.go).
func (b *Backend) loadStoreFiles(ctx context.Context, table string, key []byte, files []storeFile, assignSeqNum bool) error {
	if err := checkTable(table); err != nil {
		return err
	}
	if len(files) == 0 {
		return nil
	}
	cn, rctx, done := b.begin(ctx)
	defer done()
	call := &bulkLoadCall{callBase: newCallBase(rctx, []byte(table), key), files: files, assignSeqNum: assignSeqNum}
	resp, err := cn.rpc.SendRPC(call)
	if err != nil {
		return b.rpcErr(ctx, cn, "bulk load", table, err)
	}
	r, ok := resp.(*pb.BulkLoadHFileResponse)
	if !ok {
		return fmt.Errorf("hbase: bulk load %q: unexpected response %T", table, resp)
	}
	if !r.GetLoaded() {
		return fmt.Errorf("%w: table %q", errNotLoaded, table)
	}
	return nil
}
