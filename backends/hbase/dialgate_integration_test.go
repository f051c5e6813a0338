//go:build integration

package hbase_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// TestCloseWhileDialing: a Backend closed while its data client dials its first region server (the
// dial held, tied to nothing the closing goroutine does) does not race with that dial (gohbase's
// region client reads its connection unlocked when Close fails it, and the dial stores it: -race
// caught it in a chaos test before dialgate.go), and returns without waiting the held dial out.
func TestCloseWhileDialing(t *testing.T) {
	ctx := testCtx(t)
	name := newTable(t, openBackend(t, hbase.Options{}), backends.TableOptions{Families: []string{"f"}})

	var (
		d     net.Dialer
		data  atomic.Bool // set once Open is done: the dials that follow are the data client's
		hold  atomic.Bool // the first of them is held
		mu    sync.Mutex
		conns []net.Conn
	)
	held := make(chan struct{})
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil || !data.Load() {
			return c, err // the admin client's, which the driver never closes
		}
		conn := c
		mu.Lock()
		conns = append(conns, conn)
		mu.Unlock()
		if !hold.CompareAndSwap(true, false) {
			return conn, nil
		}
		close(held)
		// A timer, not a channel the test closes: only the driver may order the test's Close
		// before the client's use of this connection.
		select {
		case <-time.After(10 * time.Second):
			return conn, nil
		case <-ctx.Done():
			_ = conn.Close()
			return nil, ctx.Err()
		}
	}
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: hbasetest.ZK(t), RegionDialer: dial})
	if err != nil {
		t.Fatal(err)
	}
	data.Store(true)
	hold.Store(true)
	read := make(chan error, 1)
	go func() {
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := b.Read(rctx, name, [][]byte{[]byte("k")}, backends.ReadOptions{})
		read <- err
	}()
	select {
	case <-held:
	case err := <-read:
		t.Fatalf("the read ended before the data client dialled: %v", err)
	}
	began := time.Now()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 8*time.Second {
		t.Errorf("Close took %v: it waited the held dial out instead of cancelling it", d)
	}
	if err := <-read; err == nil {
		t.Errorf("a read on a closed client succeeded")
	}
	// gohbase goes on connecting the closed client's regions; its dials must find the gate closed
	// and wait for Close (the unit test shows that order), so -race sees any store they make.
	hbasetest.WaitGoroutinesGone(t, hbasetest.EstablishRegion, time.Minute)
	mu.Lock()
	defer mu.Unlock()
	for _, c := range conns[1:] {
		_ = c.Close() // gohbase never closes a connection a closed client made (docs/limits.md)
	}
	t.Logf("the data client dialled %d connections, %d of them after the held one was cancelled", len(conns), len(conns)-1)
}
