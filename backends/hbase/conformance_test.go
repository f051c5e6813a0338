//go:build integration

package hbase_test

import (
	"context"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// TestConformance runs the drivers' shared suite against the real server. One Backend serves every
// subtest: each Open costs gohbase connections, and this gohbase's admin client cannot be closed.
func TestConformance(t *testing.T) {
	zk := hbasetest.ZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk})
	if err != nil {
		t.Fatalf("Open(%s): %v", zk, err)
	}
	t.Cleanup(func() { b.Close() })
	backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: hbase.MaxKeyLen, SplitKeysAreRegions: true},
		func(t *testing.T) backends.Backend { return b })
}
