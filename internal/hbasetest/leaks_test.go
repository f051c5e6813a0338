package hbasetest

import (
	"strings"
	"testing"
)

// Goroutine stacks as runtime.Stack prints them (the close-scanner one as a CI run of 2026-11-29
// left it).
const (
	closer = `goroutine 6950 [select, 1 minutes]:
github.com/tsuna/gohbase.sendBlocking({0xd23a60?, 0x282d7fbb80b0?}, {0xd27b20, 0x282d7fba3900})
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/rpc.go:142 +0xdd
github.com/tsuna/gohbase.(*client).sendRPCToRegion(0x282d7f9df100, {0xd27b20, 0x282d7fba3900}, {0xd2ad30, 0x282d7fe41380})
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/rpc.go:168 +0x91
github.com/tsuna/gohbase.(*client).SendRPC(0x282d7f9df100, {0xd27b20, 0x282d7fba3900})
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/rpc.go:103 +0x2bb
created by github.com/tsuna/gohbase.(*scanner).closeRegionScanner in goroutine 6966
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/scanner.go:326 +0x216`
	brineSend = `goroutine 7001 [select]:
github.com/tsuna/gohbase.sendBlocking({0xd23a60?, 0x282d7fbb80b0?}, {0xd27b20, 0x282d7fba3900})
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/rpc.go:142 +0xdd
github.com/tsuna/gohbase.(*client).SendRPC(0x282d7f9df100, {0xd27b20, 0x282d7fba3900})
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/rpc.go:103 +0x2bb
github.com/brine-kv/brine/backends/hbase.(*Backend).closeScanner(0x1, {0x2, 0x3}, {0x4, 0x5, 0x6}, 0x7)
	/src/backends/hbase/scan.go:374 +0x1
created by github.com/brine-kv/brine/fanout.Run in goroutine 12
	/src/fanout/fanout.go:80 +0x2`
	reader = `goroutine 31 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/usr/lib/go/src/runtime/netpoll.go:351 +0x85
github.com/tsuna/gohbase/region.(*client).receiveRPCs(0x1)
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/region/client.go:489 +0x1
created by github.com/tsuna/gohbase/region.(*client).Dial in goroutine 30
	/m/github.com/tsuna/gohbase@v0.0.0-20220517082425-cb1f77f08e4f/region/new.go:60 +0x1`
	main = `goroutine 1 [running]:
main.main()
	/src/main.go:3 +0x1`
)

func TestClosersOnly(t *testing.T) {
	tests := []struct {
		name string
		gs   []string
		n    int
		only bool
	}{
		{"nothing in SendRPC", []string{main, reader}, 0, true},
		{"one closer", []string{main, closer, reader}, 1, true},
		{"two closers", []string{closer, main, closer}, 2, true},
		{"brine waits in SendRPC", []string{main, brineSend}, 0, false},
		{"a closer and brine", []string{closer, brineSend, reader}, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dump := strings.Join(tc.gs, "\n\n") + "\n"
			if n, only := closersOnly([]byte(dump)); n != tc.n || only != tc.only {
				t.Errorf("closersOnly = %d, %v; want %d, %v", n, only, tc.n, tc.only)
			}
		})
	}
}

// TestFindLeaksCatchesOthers: a goroutine that is not gohbase's closer is reported, not forgiven.
func TestFindLeaksCatchesOthers(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); <-stop }()
	n, err := FindLeaks()
	close(stop)
	<-done
	if err == nil || n != 0 {
		t.Errorf("FindLeaks with a goroutine left = %d, %v; want 0 and an error", n, err)
	}
	if n, err := FindLeaks(); err != nil || n != 0 {
		t.Errorf("FindLeaks with nothing left = %d, %v", n, err)
	}
}
