package dropin

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no GetRange or Scan leaves a bucket reader behind. Every test's server is
// closed by then, which ends the SDK's keep-alive connections to it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
