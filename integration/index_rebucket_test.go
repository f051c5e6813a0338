//go:build integration

package integration

import (
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/indextest"
)

// TestHBaseIndexRebucket: indextest.RebucketLive on HBase, with the directory refresh and fence of
// TestHBaseRebucketLive: the main table, then an index table of each kind, moved under indexed
// writers; every index exact after each.
func TestHBaseIndexRebucket(t *testing.T) {
	e := openHBase(t)
	indextest.RebucketLive(t, e.backend, hbasetest.Table("brine_ixreb"), indextest.RebucketTimes{Refresh: 200 * time.Millisecond, Fence: time.Second}, 3)
}

// TestTablestoreIndexRebucket: indextest.RebucketLive over the Tablestore protocol (the local server,
// and a live instance when configured).
func TestTablestoreIndexRebucket(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		indextest.RebucketLive(t, e.backend, tsTableName("ixreb"), indextest.RebucketTimes{Refresh: 200 * time.Millisecond, Fence: time.Second}, 3)
	})
}
