//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/periodtest"
)

// TestPeriodsHBase runs the partitioned-table suite on the real HBase, on the layout whose periods
// interleave in key order only: every period is a table, and HBase creates and drops one in about a
// second.
func TestPeriodsHBase(t *testing.T) {
	zk := hbasetest.ZK(t)
	periodtest.Run(t, periodtest.Store{
		Prefix:  hbasetest.Table("per") + "_",
		Layouts: []string{"host-first"},
		Open: func(t *testing.T) backends.Backend {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk, Options: hbase.Options{Logger: testLogger(t)}})
			if err != nil {
				t.Fatalf("hbase.Open(%s): %v", zk, err)
			}
			return b
		},
	})
}

// TestPeriodsTablestore runs the partitioned-table suite on the local Tablestore server (and a live
// instance when configured).
func TestPeriodsTablestore(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		periodtest.Run(t, periodtest.Store{
			Prefix: tsTableName("per") + "_",
			Open: func(t *testing.T) backends.Backend {
				cfg := tg.cfg
				cfg.Logger = tsLogger(t)
				b, err := tablestore.Open(tsCtx(t, time.Minute), cfg)
				if err != nil {
					t.Fatalf("tablestore.Open: %v", err)
				}
				return b
			},
		})
	})
}
