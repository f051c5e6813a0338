//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// masterRPC is a MasterService call the pinned gohbase has no request type for (namespaces, table
// descriptors), sent through its admin client, for the tests' setup and checks.
type masterRPC struct {
	mu      sync.Mutex
	ctx     context.Context
	name    string
	req     proto.Message
	newResp func() proto.Message
	result  chan hrpc.RPCResult
}

func (c *masterRPC) Table() []byte                   { return nil }
func (c *masterRPC) Name() string                    { return c.name }
func (c *masterRPC) Key() []byte                     { return nil }
func (c *masterRPC) Region() hrpc.RegionInfo         { return nil }
func (c *masterRPC) SetRegion(hrpc.RegionInfo)       {}
func (c *masterRPC) ToProto() proto.Message          { return c.req }
func (c *masterRPC) NewResponse() proto.Message      { return c.newResp() }
func (c *masterRPC) ResultChan() chan hrpc.RPCResult { return c.result }
func (c *masterRPC) Description() string             { return c.name }
func (c *masterRPC) Context() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctx
}
func (c *masterRPC) SetContext(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
}

func (e *hbaseEnv) master(ctx context.Context, name string, req proto.Message, newResp func() proto.Message) (proto.Message, error) {
	rpc, ok := e.backend.AdminClient().(gohbase.RPCClient)
	if !ok {
		return nil, errors.New("the admin client sends no custom RPCs")
	}
	return rpc.SendRPC(&masterRPC{ctx: ctx, name: name, req: req, newResp: newResp, result: make(chan hrpc.RPCResult, 1)})
}

// namespace creates a namespace for the test and drops it when the test ends (after its tables, which
// the test drops in cleanups registered later).
func (e *hbaseEnv) namespace(t *testing.T) string {
	t.Helper()
	ctx := testkit.Context(t, time.Minute)
	ns := strings.ReplaceAll(hbasetest.Table("brine_ns"), "-", "_")
	_, err := e.master(ctx, "CreateNamespace", &pb.CreateNamespaceRequest{NamespaceDescriptor: &pb.NamespaceDescriptor{Name: []byte(ns)}},
		func() proto.Message { return &pb.CreateNamespaceResponse{} })
	if err != nil {
		t.Fatalf("CreateNamespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := e.master(ctx, "DeleteNamespace", &pb.DeleteNamespaceRequest{NamespaceName: proto.String(ns)},
			func() proto.Message { return &pb.DeleteNamespaceResponse{} }); err != nil {
			t.Errorf("DeleteNamespace %s: %v", ns, err)
		}
	})
	// The namespace procedure finishes asynchronously, and the master lists a new namespace before a
	// CreateTable in it stops failing with NamespaceNotFoundException (seen 1 run in 5): wait until a
	// probe table can be created in it.
	probe := ns + ":brine_probe"
	for {
		err := e.backend.CreateTable(ctx, probe, backends.TableOptions{Families: []string{fam}})
		if err == nil {
			if err := e.backend.DeleteTable(ctx, probe); err != nil {
				t.Fatalf("DeleteTable(%s): %v", probe, err)
			}
			return ns
		}
		if !strings.Contains(err.Error(), "NamespaceNotFoundException") {
			t.Fatalf("CreateTable(%s): %v", probe, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("namespace %s: no table can be created in it: %v", ns, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// familySchema reads a table's column family descriptors back from the master.
func (e *hbaseEnv) familySchema(t *testing.T, ns, qualifier string) map[string]map[string]string {
	t.Helper()
	msg, err := e.master(testkit.Context(t, time.Minute), "GetTableDescriptors", &pb.GetTableDescriptorsRequest{
		TableNames: []*pb.TableName{{Namespace: []byte(ns), Qualifier: []byte(qualifier)}},
	}, func() proto.Message { return &pb.GetTableDescriptorsResponse{} })
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, s := range msg.(*pb.GetTableDescriptorsResponse).GetTableSchema() {
		for _, cf := range s.GetColumnFamilies() {
			attrs := map[string]string{}
			for _, a := range cf.GetAttributes() {
				attrs[string(a.GetFirst())] = string(a.GetSecond())
			}
			out[string(cf.GetName())] = attrs
		}
	}
	return out
}

// TestDropinNamespaces: a salted table in a namespace of its own ("ns:table") is created, written,
// read, scanned both ways and dropped through brine; a plain namespaced table and hbase:meta are read
// through WithUnsalted as raw gohbase reads them; without WithUnsalted a table with no spec is refused.
func TestDropinNamespaces(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 3*time.Minute)
	ns := e.namespace(t)
	name := ns + ":salted"
	s := testkit.Salter(t, "hash:4")
	if _, err := e.client.CreateTable(ctx, name, client.TableConfig{Salter: s}); err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	e.dropTable(t, name)
	d := newDropin(t, e, dropin.WithUnsalted())

	keys := scanKeys()[:120]
	writeRaw(t, d, name, keys)
	res, err := d.Get(must2(hrpc.NewGetStr(ctx, name, string(keys[7]))))
	if err != nil || resultRow(res).String() != expectRow(keys[7]).String() {
		t.Fatalf("Get %q in %s: %v, %v", keys[7], name, res, err)
	}
	var want []row
	for _, k := range keys {
		want = append(want, expectRow(k))
	}
	got, err := drain(d.Scan(must2(hrpc.NewScanStr(ctx, name))))
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffRows(got, want); diff != "" {
		t.Fatalf("scan of %s: %s", name, diff)
	}
	got, err = drain(d.Scan(must2(hrpc.NewScanStr(ctx, name, hrpc.Reversed()))))
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffRows(got, reversed(want)); diff != "" {
		t.Fatalf("reversed scan of %s: %s", name, diff)
	}
	// Salted on the server: every physical row is a hash:4 key.
	phys := rawScan(t, e.raw, name, nil, nil)
	if len(phys) != len(keys) {
		t.Fatalf("%d physical rows, want %d", len(phys), len(keys))
	}
	for _, r := range phys {
		if _, err := s.AppendLogical(nil, []byte(r.Key)); err != nil {
			t.Fatalf("physical row %q: %v", r.Key, err)
		}
	}

	// A namespaced table brine did not salt, and hbase:meta: read as they are. Of hbase:meta, only
	// the rows of this test's namespace: the other tests running against the same server change
	// theirs (table states, regions) between the two scans.
	plain := e.unsaltedIn(t, ns+":plain")
	writeRaw(t, e.raw, plain, keys[:10])
	for _, tc := range []struct{ table, start, stop string }{{plain, "", ""}, {"hbase:meta", ns + ":", ns + ";"}} {
		want := rawScan(t, e.raw, tc.table, []byte(tc.start), []byte(tc.stop))
		got, err := drain(d.Scan(must2(hrpc.NewScanRangeStr(ctx, tc.table, tc.start, tc.stop))))
		if err != nil {
			t.Fatalf("scan of %s: %v", tc.table, err)
		}
		if diff := diffRows(got, want); diff != "" || len(want) == 0 {
			t.Fatalf("scan of %s (%d rows on raw gohbase): %s", tc.table, len(want), diff)
		}
	}
	strict := newDropin(t, e)
	if _, err := strict.Get(must2(hrpc.NewGetStr(ctx, plain, string(keys[0])))); !errors.Is(err, dropin.ErrNoSpec) {
		t.Fatalf("Get of an unsalted table without WithUnsalted: %v, want ErrNoSpec", err)
	}
}

// unsaltedIn creates a plain table called name through the driver alone (no stored spec) and drops
// it when the test ends.
func (e *hbaseEnv) unsaltedIn(t *testing.T, name string) string {
	t.Helper()
	if err := e.backend.CreateTable(testkit.Context(t, time.Minute), name, backends.TableOptions{Families: []string{fam}}); err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	e.dropTable(t, name)
	return name
}

// TestDropinFamilySettings: a table brine creates gets the family settings of TableConfig, read back
// from the master; multi-version reads through the drop-in return as many versions as the family
// keeps (gohbase's CreateTable keeps 3, brine's default 1), and the family TTL hides old cells.
func TestDropinFamilySettings(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 3*time.Minute)
	s := testkit.Salter(t, "hash:4")
	no := false
	cfg := client.TableConfig{Salter: s, Families: []string{"v", "one", "ttl"}, FamilyOptions: map[string]client.FamilyOptions{
		"v":   {MaxVersions: 3, Compression: "GZ", BlockCache: &no, BloomFilter: "ROWCOL"},
		"ttl": {TTL: time.Hour},
	}}
	name := hbasetest.Table("brine_integ_fam")
	if _, err := e.client.CreateTable(ctx, name, cfg); err != nil {
		t.Fatal(err)
	}
	e.dropTable(t, name)

	schema := e.familySchema(t, "default", name)
	for f, want := range map[string]map[string]string{
		"v":   {"VERSIONS": "3", "COMPRESSION": "GZ", "BLOCKCACHE": "false", "BLOOMFILTER": "ROWCOL"},
		"one": {"VERSIONS": "1"},
		"ttl": {"VERSIONS": "1", "TTL": "3600"},
	} {
		for k, v := range want {
			if schema[f][k] != v {
				t.Errorf("family %s: %s = %q on the server, want %q (all: %v)", f, k, schema[f][k], v, schema[f])
			}
		}
	}

	d := newDropin(t, e)
	now := uint64(time.Now().UnixMilli())
	for _, f := range []string{"v", "one"} {
		for i := range uint64(5) {
			p := must2(hrpc.NewPutStr(ctx, name, "row", map[string]map[string][]byte{f: {"q": fmt.Appendf(nil, "v%d", i)}},
				hrpc.TimestampUint64(now-100+i)))
			if _, err := d.Put(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for f, want := range map[string][]string{"v": {"v4", "v3", "v2"}, "one": {"v4"}} {
		res, err := d.Get(must2(hrpc.NewGetStr(ctx, name, "row", hrpc.Families(map[string][]string{f: nil}), hrpc.MaxVersions(10))))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range res.Cells {
			got = append(got, string(c.Value))
		}
		if !slices.Equal(got, want) {
			t.Errorf("family %s, MaxVersions(10): versions %q, want %q", f, got, want)
		}
	}
	// TTL: a cell stamped two hours ago is past the family's hour; one stamped now is not.
	old := now - uint64(2*time.Hour/time.Millisecond)
	for _, c := range []struct {
		key  string
		ts   uint64
		seen bool
	}{{"old", old, false}, {"new", now, true}} {
		p := must2(hrpc.NewPutStr(ctx, name, c.key, map[string]map[string][]byte{"ttl": {"q": []byte("x")}}, hrpc.TimestampUint64(c.ts)))
		if _, err := d.Put(p); err != nil {
			t.Fatal(err)
		}
		res, err := d.Get(must2(hrpc.NewGetStr(ctx, name, c.key)))
		if err != nil {
			t.Fatal(err)
		}
		if (len(res.Cells) > 0) != c.seen {
			t.Errorf("cell %s under a 1h TTL: %d cells, want seen=%v", c.key, len(res.Cells), c.seen)
		}
	}
}
