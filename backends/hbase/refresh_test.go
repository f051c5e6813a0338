package hbase

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/region"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends/driverkit"
)

// stubClient is a gohbase client that only counts Close; every other method panics (nil interface).
type stubClient struct {
	gohbase.Client
	closed atomic.Int32
}

func (c *stubClient) Close() { c.closed.Add(1) }

func (c *stubClient) SendRPC(hrpc.Call) (proto.Message, error) { return nil, nil }

// stubAdmin is a gohbase admin client that does nothing (nil interface).
type stubAdmin struct{ gohbase.AdminClient }

func (stubAdmin) SendRPC(hrpc.Call) (proto.Message, error) { return nil, nil }

// refreshBackend is a Backend over a stub client whose refresher dials more stubs on a fake clock.
func refreshBackend(t *testing.T, after time.Duration) (*Backend, *time.Time, *[]*stubClient) {
	t.Helper()
	first := &stubClient{}
	b, err := New(first, stubAdmin{}, Options{RefreshAfter: after})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	dialed := []*stubClient{first}
	b.refresh.now = func() time.Time { return now }
	b.refresh.last = now
	b.refresh.dial = func() (*conn, error) {
		c := &stubClient{}
		dialed = append(dialed, c)
		return newConn(c)
	}
	return b, &now, &dialed
}

func TestRefreshAfterFailuresFor(t *testing.T) {
	const after = 10 * time.Second
	retryable := region.ServerError{}
	tests := []struct {
		name  string
		fails []time.Duration // failure times since the start
		err   error
		want  int64 // refreshes
		done  bool  // the caller's ctx has ended
	}{
		{"one failure", []time.Duration{11 * time.Second}, retryable, 0, false},
		{"failures for less than RefreshAfter", []time.Duration{11 * time.Second, 15 * time.Second, 20 * time.Second}, retryable, 0, false},
		{"failures for RefreshAfter", []time.Duration{11 * time.Second, 16 * time.Second, 21 * time.Second}, retryable, 1, false},
		{"a gap longer than RefreshAfter starts over", []time.Duration{11 * time.Second, 22 * time.Second, 30 * time.Second}, retryable, 0, false},
		{"timeouts count", []time.Duration{11 * time.Second, 21 * time.Second}, context.DeadlineExceeded, 1, false},
		{"non-retryable errors do not", []time.Duration{11 * time.Second, 21 * time.Second, 31 * time.Second}, errors.New("bad family"), 0, false},
		{"the new client gets RefreshAfter of its own", []time.Duration{11 * time.Second, 21 * time.Second, 22 * time.Second, 25 * time.Second, 30 * time.Second}, retryable, 1, false},
		{"the caller's own deadline does not count", []time.Duration{11 * time.Second, 21 * time.Second}, context.DeadlineExceeded, 0, true},
		{"again after RefreshAfter", []time.Duration{11 * time.Second, 21 * time.Second, 25 * time.Second, 31 * time.Second, 35 * time.Second}, retryable, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := context.Background()
			if tt.done {
				ctx, cancel := context.WithCancel(parent)
				cancel()
				parent = ctx
			}
			b, now, _ := refreshBackend(t, after)
			start := *now
			for _, at := range tt.fails {
				*now = start.Add(at)
				b.failed(parent, b.cur.Load(), tt.err)
			}
			if got := b.Refreshes(); got != tt.want {
				t.Errorf("refreshes = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRefreshRetiresTheOldClient(t *testing.T) {
	b, now, dialed := refreshBackend(t, 10*time.Second)
	old := b.cur.Load()
	// An RPC in flight on the old client when it is replaced keeps it open until it ends.
	cn, _, done := b.begin(context.Background())
	if cn != old {
		t.Fatal("begin did not use the current client")
	}
	*now = now.Add(11 * time.Second)
	b.maybeRefresh(old, "test")
	if b.cur.Load() == old || len(*dialed) != 2 {
		t.Fatalf("not replaced: %d clients dialed", len(*dialed))
	}
	if (*dialed)[0].closed.Load() != 0 {
		t.Fatal("the old client was closed under an RPC still running on it")
	}
	// A stale replacement request (for a client already replaced) does nothing.
	*now = now.Add(time.Minute)
	b.maybeRefresh(old, "test")
	if len(*dialed) != 2 {
		t.Fatal("a request for a client already replaced replaced the new one")
	}
	done()
	if (*dialed)[0].closed.Load() != 1 {
		t.Fatal("the retired client was not closed when its last RPC ended")
	}
	// New RPCs go to the new client; Close closes it (and nothing twice).
	cn, _, done = b.begin(context.Background())
	if cn.client != (*dialed)[1] {
		t.Fatal("an RPC after the replacement did not use the new client")
	}
	done()
	// A replaced client's ErrClientClosed is retryable (sent again, it goes to the new client).
	if err := b.rpcErr(context.Background(), old, "read", "t", gohbase.ErrClientClosed); !driverkit.IsRetryable(err) {
		t.Errorf("ErrClientClosed from a replaced client: %v, want retryable", err)
	}
	b.owned = true
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if (*dialed)[1].closed.Load() != 1 || (*dialed)[0].closed.Load() != 1 {
		t.Fatalf("after Close: closed %d and %d times, want 1 and 1", (*dialed)[0].closed.Load(), (*dialed)[1].closed.Load())
	}
	// After Close, the Backend's own ErrClientClosed is final.
	if err := b.rpcErr(context.Background(), b.cur.Load(), "read", "t", gohbase.ErrClientClosed); driverkit.IsRetryable(err) {
		t.Errorf("ErrClientClosed after Close: %v, want not retryable", err)
	}
}

func TestRefreshStalledRequest(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // Close ends the stall watch
	b, _, dialed := refreshBackend(t, 20*time.Millisecond)
	b.refresh.now = time.Now
	b.refresh.last = time.Now().Add(-time.Hour)
	b.watchStalls()
	defer b.Close()
	// A request that ends at once is no stall, however long the watch runs after it.
	_, _, quick := b.begin(context.Background())
	quick()
	time.Sleep(100 * time.Millisecond)
	if b.Refreshes() != 0 {
		t.Fatalf("requests that ended: %d refreshes, want 0", b.Refreshes())
	}
	began := time.Now()
	_, _, done := b.begin(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for b.Refreshes() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	waited := time.Since(began)
	done()
	if b.Refreshes() != 1 || len(*dialed) != 2 {
		t.Fatalf("a request in flight for RefreshAfter: %d refreshes, want 1", b.Refreshes())
	}
	if waited < 20*time.Millisecond {
		t.Errorf("refreshed after %v, before RefreshAfter (20ms)", waited)
	}
}
