package dropin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"go.uber.org/goleak"

	"github.com/brine-kv/brine/salting"
)

// NewClient has gohbase.NewClient's very type: a program switches by changing the name alone.
var _ = []func(string, ...gohbase.Option) gohbase.Client{gohbase.NewClient, NewClient}

// lazyFake is a NewClient client whose connection is a drop-in over fake with tbl's spec stored as
// hash:4, made by open after the attempts listed in fail have failed; opens counts the attempts.
type lazyFake struct {
	fake  *fakeHBase
	opens atomic.Int32
	fail  []error       // the errors of the first attempts, in order
	gate  chan struct{} // when not nil, every attempt waits for it
}

func (l *lazyFake) client(t *testing.T) *Client {
	t.Helper()
	c := newLazy(func(ctx context.Context) (*Client, error) {
		n := int(l.opens.Add(1))
		if l.gate != nil {
			select {
			case <-l.gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if n <= len(l.fail) {
			return nil, l.fail[n-1]
		}
		o := New(l.fake)
		o.meta = metaFunc(func(string) (map[string]string, error) {
			return map[string]string{salting.MetaKey: "hash:4"}, nil
		})
		return o, nil
	})
	t.Cleanup(c.Close)
	return c
}

func putGet(ctx context.Context, t *testing.T, c gohbase.Client) error {
	t.Helper()
	put := must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "k", map[string]map[string][]byte{"d": {"a": []byte("1")}}))
	if _, err := c.Put(put); err != nil {
		return err
	}
	r, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k")))
	if err != nil {
		return err
	}
	if len(r.Cells) != 1 || string(r.Cells[0].Row) != "k" || string(r.Cells[0].Value) != "1" {
		t.Errorf("Get = %v, want row k, d:a=1", r.Cells)
	}
	return nil
}

// Making the client connects nothing; the first call connects, once; a failed attempt is returned
// wrapped (or as ctx.Err() when the call's context ended) and the next call tries again.
func TestNewClientConnectsOnFirstUse(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("no cluster")
	l := &lazyFake{fake: newFake(), fail: []error{boom, context.DeadlineExceeded}}
	c := l.client(t)
	if n := l.opens.Load(); n != 0 {
		t.Fatalf("%d connection attempts before any call", n)
	}

	if err := putGet(ctx, t, c); !errors.Is(err, boom) || err == boom {
		t.Fatalf("first call: %v, want %v wrapped", err, boom)
	}
	// The attempt failed on a deadline that is not the call's: an error of the drop-in, not ctx.Err().
	if err := putGet(ctx, t, c); !errors.Is(err, context.DeadlineExceeded) || err == context.DeadlineExceeded {
		t.Fatalf("second call: %v, want a wrapped deadline", err)
	}
	if _, err := c.Salter(ctx, tbl); err != nil {
		t.Fatalf("third attempt (Salter): %v", err)
	}
	if err := putGet(ctx, t, c); err != nil {
		t.Fatalf("once connected: %v", err)
	}
	if n := l.opens.Load(); n != 3 {
		t.Errorf("%d connection attempts, want 3 (two failed, one made)", n)
	}
	if keys := l.fake.keys(tbl); len(keys) != 1 || string(keys[0]) == "k" {
		t.Errorf("physical keys %q, want the salted k", keys)
	}
	c.Close()
	if n := l.fake.closes(); n != 1 {
		t.Errorf("Close closed the connection %d times, want 1", n)
	}
	if err := putGet(ctx, t, c); err != gohbase.ErrClientClosed {
		t.Errorf("after Close: %v, want gohbase.ErrClientClosed", err)
	}
}

// Concurrent first calls make one connection; a call whose context ends while it waits returns
// ctx.Err() itself; a scan reports a failed connection from its first Next.
func TestNewClientConnectsOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	l := &lazyFake{fake: newFake(), fail: []error{errors.New("down")}, gate: make(chan struct{})}
	c := l.client(t)
	ctx := context.Background()

	scanErr := make(chan error, 1)
	go func() { // the first attempt, held at the gate, then failing
		_, err := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl))).Next()
		scanErr <- err
	}()
	for l.opens.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := putGet(short, t, c); err != context.DeadlineExceeded {
		t.Errorf("a call waiting past its deadline: %v, want context.DeadlineExceeded itself", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = putGet(ctx, t, c) })
	}
	close(l.gate)
	if err := <-scanErr; err == nil || err.Error() != "dropin: connecting on first use: down" {
		t.Errorf("Scan's Next: %v, want the failed connection", err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if n := l.opens.Load(); n != 2 {
		t.Errorf("%d connection attempts, want 2 (the scan's, then one for the 8 calls)", n)
	}
	c.Close()
}

// Close before any call connects nothing; Close while a call connects closes what it made.
func TestNewClientClose(t *testing.T) {
	ctx := context.Background()
	t.Run("before use", func(t *testing.T) {
		l := &lazyFake{fake: newFake()}
		c := l.client(t)
		c.Close()
		if err := putGet(ctx, t, c); err != gohbase.ErrClientClosed {
			t.Errorf("call: %v, want gohbase.ErrClientClosed", err)
		}
		if _, err := c.Salter(ctx, tbl); err != gohbase.ErrClientClosed {
			t.Errorf("Salter: %v, want gohbase.ErrClientClosed", err)
		}
		if n := l.opens.Load(); n != 0 {
			t.Errorf("%d connection attempts", n)
		}
	})
	t.Run("while connecting", func(t *testing.T) {
		l := &lazyFake{fake: newFake(), gate: make(chan struct{})}
		c := l.client(t)
		done := make(chan error, 1)
		go func() { done <- putGet(ctx, t, c) }()
		for l.opens.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		c.Close()
		close(l.gate)
		if err := <-done; err != gohbase.ErrClientClosed {
			t.Errorf("call: %v, want gohbase.ErrClientClosed", err)
		}
		if n := l.fake.closes(); n != 1 {
			t.Errorf("the connection made was closed %d times, want 1", n)
		}
	})
}

// NewClient itself, on a quorum where nothing listens: making it returns at once, and the first
// call fails within its own deadline with ctx.Err(), as gohbase's client would, leaving no goroutine
// (the connection failed in the cluster check, before any gohbase client was made).
func TestNewClientNoCluster(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	began := time.Now()
	c := NewClient("127.0.0.1:1", gohbase.EffectiveUser("someone"))
	if d := time.Since(began); d > 100*time.Millisecond {
		t.Errorf("NewClient took %v", d)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, "t", "k"))); err != context.DeadlineExceeded {
		t.Errorf("Get: %v, want context.DeadlineExceeded itself", err)
	}
}
