//go:build integration

package integration

import (
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/indextest"
)

// The index cases the embedded stores run (client/indextest), on HBase and on the Tablestore
// server: the table-driven steps, the scan options, writers racing index scans, and indexes added to
// and dropped from tables in use.
func runIndexCases(t *testing.T, b backends.Backend, name func() string, scanOptions bool) {
	t.Run("steps", func(t *testing.T) { indextest.Steps(t, indextest.NewOrders(t, b, name())) })
	if scanOptions {
		t.Run("scan options", func(t *testing.T) { indextest.ScanOptions(t, indextest.NewOrders(t, b, name())) })
	}
	t.Run("concurrent", func(t *testing.T) { indextest.Concurrent(t, indextest.NewOrders(t, b, name()), 1, 4, 25) })
	t.Run("conditional race", func(t *testing.T) { indextest.ConditionalRace(t, indextest.NewOrders(t, b, name()), 4, 10) })
	t.Run("revoke race", func(t *testing.T) { indextest.RevokeRace(t, indextest.NewOrders(t, b, name()), 3, 10) })
	t.Run("add live", func(t *testing.T) { indextest.AddLive(t, b, name()) })
	t.Run("add resume", func(t *testing.T) { indextest.AddResume(t, b, name()) })
	t.Run("drop live", func(t *testing.T) { indextest.DropLive(t, b, name()) })
}

func TestHBaseIndexCases(t *testing.T) {
	e := openHBase(t)
	// Scan options are client logic over the calls the steps already make: left to the other stores
	// to keep HBase time (each case creates and drops four tables) near 15 s.
	runIndexCases(t, e.backend, func() string { return hbasetest.Table("brine_ix") }, false)
}

func TestTablestoreIndexCases(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		runIndexCases(t, e.backend, func() string { return tsTableName("ix") }, true)
	})
}
