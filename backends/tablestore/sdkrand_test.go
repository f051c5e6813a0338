package tablestore

import (
	"sync"
	"testing"

	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// TestConcurrentSDKRetries: requests retrying at once on one SDK client draw their pauses from a
// guarded generator; under -race, an unguarded one fails this test.
func TestConcurrentSDKRetries(t *testing.T) {
	srv := tablestoretest.Start(t)
	sdk := srv.NewClient(nil)
	New(sdk, Options{})
	New(sdk, Options{}) // a second wrap keeps the guard
	srv.FailNext(tablestoretest.AnyOp, tablestoretest.CodeServerBusy, 16)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := sdk.ListTable(); err != nil {
				t.Errorf("ListTable: %v", err)
			}
		})
	}
	wg.Wait()
	if n := srv.Stats().Total().Failures; n != 16 {
		t.Fatalf("%d failures answered, want 16 retried", n)
	}
}
