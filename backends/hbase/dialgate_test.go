package hbase

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestDialGate: close cancels a dial in progress and waits, for a connection handed over, until
// the context it was dialled with has ended; it hands over the dialer's own connection; a dial after close waits for clientClosed, or gives up with its context.
func TestDialGate(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()
	pipe := func(context.Context, string, string) (net.Conn, error) {
		c, s := net.Pipe()
		t.Cleanup(func() { s.Close() })
		return c, nil
	}

	t.Run("dial in progress is cancelled", func(t *testing.T) {
		entered := make(chan struct{})
		g := newDialGate(func(ctx context.Context, _, _ string) (net.Conn, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		got := make(chan error, 1)
		go func() {
			_, err := g.Dial(ctx, "tcp", "a:1")
			got <- err
		}()
		<-entered
		g.close()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Fatalf("dial in progress at close: %v, want context.Canceled", err)
		}
		g.clientClosed()
	})

	t.Run("close waits for the dial's context", func(t *testing.T) {
		own, _ := pipe(ctx, "", "")
		g := newDialGate(func(context.Context, string, string) (net.Conn, error) { return own, nil })
		dctx, cancel := context.WithCancel(ctx)
		conn, err := g.Dial(dctx, "tcp", "a:1")
		if err != nil {
			t.Fatal(err)
		}
		if conn != own {
			// A wrapper hides *net.TCPConn's writev from net.Buffers.WriteTo (dialgate.go).
			t.Fatalf("Dial handed over %T, not the dialer's own connection", conn)
		}
		closed := make(chan struct{})
		go func() { g.close(); close(closed) }()
		select {
		case <-closed:
			t.Fatal("close returned while the dial's context ran (gohbase stores the connection before it ends it)")
		case <-time.After(50 * time.Millisecond):
		}
		cancel() // gohbase's, as Dial returns
		<-closed
		g.clientClosed()
		_ = conn.Close()
	})

	t.Run("dial after close waits for the client's Close", func(t *testing.T) {
		g := newDialGate(pipe)
		g.close()
		got := make(chan net.Conn, 1)
		go func() {
			conn, err := g.Dial(ctx, "tcp", "a:1")
			if err != nil {
				t.Error(err)
			}
			got <- conn
		}()
		select {
		case <-got:
			t.Fatal("a dial after close returned before the client's Close")
		case <-time.After(50 * time.Millisecond):
		}
		g.clientClosed()
		if conn := <-got; conn != nil {
			_ = conn.Close()
		}
	})

	t.Run("dial after close gives up with its context", func(t *testing.T) {
		g := newDialGate(pipe)
		g.close()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := g.Dial(cctx, "tcp", "a:1"); !errors.Is(err, context.Canceled) {
			t.Fatalf("dial after close with an ended context: %v", err)
		}
		g.clientClosed()
	})
}
