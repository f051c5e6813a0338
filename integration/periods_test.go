//go:build integration

package integration

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/periodtest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// TestPeriodsHBase runs the period-table suite on the real HBase, on the layout whose periods
// interleave in key order only and without the metadata test: every period is a table, and HBase
// creates and drops one in about a second (about 13 s in all; the CLI's year on HBase, in
// cmd/brine, about 14 s more).
func TestPeriodsHBase(t *testing.T) {
	zk := hbasetest.ZK(t)
	periodtest.Run(t, periodtest.Store{
		Prefix:     hbasetest.Table("per") + "_",
		Layouts:    []string{"host-first"},
		NoMetadata: true,
		Open: func(t *testing.T) backends.Backend {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk, Options: hbase.Options{Logger: testkit.Logger(t, slog.LevelWarn)}})
			if err != nil {
				t.Fatalf("hbase.Open(%s): %v", zk, err)
			}
			return b
		},
	})
}

// TestPeriodsTablestore runs the period-table suite on the local Tablestore server (and a live
// instance when configured).
func TestPeriodsTablestore(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		periodtest.Run(t, periodtest.Store{
			Prefix: tsTableName("per") + "_",
			Open: func(t *testing.T) backends.Backend {
				cfg := tg.cfg
				cfg.Logger = testkit.Logger(t, slog.LevelWarn)
				b, err := tablestore.Open(testkit.Context(t, time.Minute), cfg)
				if err != nil {
					t.Fatalf("tablestore.Open: %v", err)
				}
				return b
			},
		})
	})
}

// TestPeriodsHBaseFamilySettings: a period created with its own family settings (the cold months'
// TTL and compression) has them on the server, and the next period the table's defaults.
func TestPeriodsHBaseFamilySettings(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 2*time.Minute)
	month, err := periods.ParseInterval("month")
	if err != nil {
		t.Fatal(err)
	}
	name := hbasetest.Table("per_fam")
	p, err := periods.Create(ctx, e.client, name, periods.Config{
		Interval: month, TimeField: 0, Table: client.TableConfig{Salter: testkit.Salter(t, "hash:2")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Drop(context.Background()); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	oct := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	cold := &client.TableConfig{FamilyOptions: map[string]client.FamilyOptions{
		"d": {TTL: 90 * 24 * time.Hour, Compression: "GZ"},
	}}
	if _, err := p.CreatePeriod(ctx, oct, cold); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreatePeriod(ctx, oct.AddDate(0, 1, 0), nil); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]map[string]string{
		name + "_2026_10": {"TTL": "7776000", "COMPRESSION": "GZ"},
		name + "_2026_11": {"TTL": "2147483647", "COMPRESSION": "NONE"}, // HBase's "forever",
	} {
		got := e.familySchema(t, "default", table)["d"]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: family d %s = %q, want %q (all: %v)", table, k, got[k], v, got)
			}
		}
	}
}
