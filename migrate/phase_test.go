package migrate_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// TestCopyProgressIndexPhases: an indexed copy reports its phases after the rows, the indexes' build
// then each index's check, each when it begins, with all rows written by then; a plain copy has none.
func TestCopyProgressIndexPhases(t *testing.T) {
	for _, tc := range []struct {
		indexed bool
		want    []string
	}{
		{false, nil},
		{true, []string{migrate.PhaseIndexes + " ", migrate.PhaseVerifyIndex + " by_buyer"}},
	} {
		ctx := testkit.Context(t, time.Minute)
		from, to := open(t, "local"), open(t, "memory")
		load(t, ctx, from, tc.indexed)
		var (
			mu     sync.Mutex
			phases []string
			bad    []migrate.Progress
		)
		_, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Progress: func(p migrate.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Phase == "" {
				if len(phases) > 0 {
					bad = append(bad, p) // rows reported after the rows' phase ended
				}
				return
			}
			if p.Rows != rows || p.Buckets != p.Total || p.Elapsed < 0 {
				bad = append(bad, p)
			}
			if ph := p.Phase + " " + p.Index; len(phases) == 0 || phases[len(phases)-1] != ph {
				phases = append(phases, ph)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(phases, tc.want) || len(bad) > 0 {
			t.Errorf("indexed=%t: phases %q (bad reports %+v), want %q", tc.indexed, phases, bad, tc.want)
		}
	}
}
