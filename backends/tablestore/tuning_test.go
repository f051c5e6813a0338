package tablestore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

// TestTune changes a live table's reserved throughput and TTL as the guide's hot and cold tables
// need, each setting alone, and checks what DescribeTable then reports.
func TestTune(t *testing.T) {
	te := newTestEnv(t)
	b := te.open(t, nil)
	ctx := t.Context()
	table := fmt.Sprintf("brine_tune_%08x", rand.Uint32())
	if err := b.CreateTable(ctx, table, backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.DeleteTable(ctx, table) })
	describe := func() (ots.ReservedThroughput, ots.TableOption) {
		t.Helper()
		d, err := b.client.DescribeTable(&ots.DescribeTableRequest{TableName: table})
		if err != nil {
			t.Fatal(err)
		}
		return *d.ReservedThroughput, *d.TableOption
	}
	_, before := describe()
	steps := []struct {
		tune    func(*backends.Tuning)
		rt      ots.ReservedThroughput
		ttlSecs int
	}{
		{func(t *backends.Tuning) { t.ReadCU, t.WriteCU = 5, 10 }, ots.ReservedThroughput{Readcap: 5, Writecap: 10}, -1},
		{func(t *backends.Tuning) { t.WriteCU = 0 }, ots.ReservedThroughput{Readcap: 5, Writecap: 0}, -1},
		{func(t *backends.Tuning) { t.TTL = 90 * 24 * time.Hour }, ots.ReservedThroughput{Readcap: 5, Writecap: 0}, 90 * 86400},
		{func(t *backends.Tuning) { t.TTL = 0 }, ots.ReservedThroughput{Readcap: 5, Writecap: 0}, -1},
		{func(*backends.Tuning) {}, ots.ReservedThroughput{Readcap: 5, Writecap: 0}, -1},
	}
	for i, st := range steps {
		tn := backends.Keep
		st.tune(&tn)
		if err := b.Tune(ctx, table, tn); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		rt, opt := describe()
		if rt != st.rt || opt.TimeToAlive != st.ttlSecs || opt.MaxVersion != before.MaxVersion {
			t.Errorf("step %d: throughput %+v, options %+v; want %+v, TTL %d, %d versions", i, rt, opt, st.rt, st.ttlSecs, before.MaxVersion)
		}
	}
	bad := backends.Keep
	bad.TTL = 1500 * time.Millisecond
	if err := b.Tune(ctx, table, bad); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("TTL of 1.5 s: %v, want ErrInvalidArgument", err)
	}
	if err := b.Tune(ctx, table+"_missing", backends.Tuning{ReadCU: 1, WriteCU: -1, TTL: -1}); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("missing table: %v, want ErrTableNotFound", err)
	}
}
