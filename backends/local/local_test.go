package local_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestPersistence(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brine.db")
	s, err := local.Open(context.Background(), local.Config{Path: path}) // durable: fsync at every commit
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{"brine.salt": "hash:4"}
	splits := [][]byte{{0x40}, {0x80}, {0xC0}}
	if err := s.CreateTable(ctx, "t", backends.TableOptions{Families: []string{"d"}, SplitKeys: splits, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, context.Background(), s, "t", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{testkit.Cell("q", "v")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = local.Open(context.Background(), local.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.TableMeta(ctx, "t")
	if err != nil || !maps.Equal(got, meta) {
		t.Fatalf("TableMeta after reopening = %v, %v", got, err)
	}
	regions, err := s.Regions(ctx, "t")
	if err != nil || fmt.Sprintf("%q", regions) != fmt.Sprintf("%q", append([][]byte{{}}, splits...)) {
		t.Fatalf("Regions after reopening = %q, %v", regions, err)
	}
	rows, err := s.Read(ctx, "t", [][]byte{[]byte("k")}, backends.ReadOptions{})
	if err != nil || len(rows[0].Cells) != 1 || string(rows[0].Cells[0].Value) != "v" {
		t.Fatalf("row after reopening = %+v, %v", rows, err)
	}
	// Families survive too: they are still enforced.
	rowErrs, err := s.Apply(ctx, "t", []backends.Mutation{{Key: []byte("k"), Cells: []backends.Cell{{Family: "x", Qualifier: "q"}}}})
	if err != nil || len(rowErrs) != 1 || !errors.Is(rowErrs[0], backends.ErrInvalidArgument) {
		t.Fatalf("put to an undeclared family after reopening: %v, %v", rowErrs, err)
	}
	// A new table gets a new id, not one of a table created before.
	if err := s.CreateTable(ctx, "u", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.Read(ctx, "u", [][]byte{[]byte("k")}, backends.ReadOptions{}); len(rows[0].Cells) != 0 {
		t.Fatal("new table sees another table's rows")
	}
}

func TestExclusiveLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "brine.db")
	s, err := local.Open(context.Background(), local.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if s2, err := local.Open(context.Background(), local.Config{Path: path, LockTimeout: 50 * time.Millisecond}); err == nil {
		s2.Close()
		t.Fatal("a second Open of a file open for writing succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("second Open took %v", d)
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "brine.db")
	s, err := local.Open(context.Background(), local.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, "t", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, context.Background(), s, "t", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{testkit.Cell("q", "v")}})
	s.Close()

	r1, err := local.Open(context.Background(), local.Config{Path: path, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := local.Open(context.Background(), local.Config{Path: path, ReadOnly: true, LockTimeout: time.Second})
	if err != nil {
		t.Fatalf("second read-only Open: %v", err)
	}
	defer r2.Close()
	if _, err := r1.Apply(ctx, "t", []backends.Mutation{{Key: []byte("k"), Delete: true}}); !errors.Is(err, local.ErrReadOnly) {
		t.Errorf("Apply on a read-only store: %v", err)
	}
	if err := r1.CreateTable(ctx, "u", backends.TableOptions{}); !errors.Is(err, local.ErrReadOnly) {
		t.Errorf("CreateTable on a read-only store: %v", err)
	}
	if err := r1.DeleteTable(ctx, "t"); !errors.Is(err, local.ErrReadOnly) {
		t.Errorf("DeleteTable on a read-only store: %v", err)
	}
	n := testkit.Count(t, r2.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}))
	if n != 1 {
		t.Fatalf("read-only scan: %d rows", n)
	}
}

func TestNotAStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("someone else's")); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := local.Open(context.Background(), local.Config{Path: path}); !errors.Is(err, local.ErrNotStore) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a foreign bbolt file: %v, want ErrNotStore", err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "brine.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, "t", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Apply(ctx, "t", nil); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("Apply after Close: %v", err)
	}
	if _, err := s.Read(ctx, "t", nil, backends.ReadOptions{}); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	for _, err := range s.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if !errors.Is(err, backends.ErrClosed) {
			t.Errorf("Scan after Close: %v", err)
		}
	}
}

func TestCloseWithWritersInFlight(t *testing.T) {
	ctx := context.Background()
	s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "brine.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx, "t", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				_, err := s.Apply(ctx, "t", []backends.Mutation{{Key: fmt.Appendf(nil, "w%d-%d", w, i), Cells: []backends.Cell{testkit.Cell("q", "v")}}})
				if errors.Is(err, backends.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Apply: %v", err)
					return
				}
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

func TestGroupCommit(t *testing.T) {
	// Many concurrent single-row writers: every row lands, every call gets its own per-row errors.
	ctx := context.Background()
	s := open(t, local.Config{})
	if err := s.CreateTable(ctx, "t", backends.TableOptions{Families: []string{"d"}}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				muts := []backends.Mutation{
					{Key: fmt.Appendf(nil, "w%d-%04d", w, i), Cells: []backends.Cell{testkit.Cell("q", "v")}},
					{Key: nil, Cells: []backends.Cell{testkit.Cell("q", "v")}},
					{Key: []byte("x"), Cells: []backends.Cell{{Family: "nope", Qualifier: "q"}}},
				}
				rowErrs, err := s.Apply(ctx, "t", muts)
				if err != nil || len(rowErrs) != 3 || rowErrs[0] != nil ||
					!errors.Is(rowErrs[1], backends.ErrInvalidKey) || !errors.Is(rowErrs[2], backends.ErrInvalidArgument) {
					t.Errorf("Apply: %v, %v", rowErrs, err)
					return
				}
			}
		})
	}
	// A table dropped while others write fails only its own writers' calls.
	if err := s.CreateTable(ctx, "gone", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	n := testkit.Count(t, s.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}))
	if n != writers*each {
		t.Fatalf("%d rows, want %d", n, writers*each)
	}
}

func TestSemantics(t *testing.T) {
	ctx := context.Background()
	s := open(t, local.Config{})
	if err := s.CreateTable(ctx, "t", backends.TableOptions{Families: []string{"d", "x"}}); err != nil {
		t.Fatal(err)
	}
	apply := func(m backends.Mutation) error {
		rowErrs, err := s.Apply(ctx, "t", []backends.Mutation{m})
		if err == nil && rowErrs != nil {
			err = rowErrs[0]
		}
		return err
	}
	if err := apply(backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Family: "nope", Qualifier: "q"}}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("put to an unknown family: %v", err)
	}
	if err := apply(backends.Mutation{Key: []byte("r")}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("put with no cells: %v", err)
	}
	if err := apply(backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Timestamp: -1}}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("negative timestamp: %v", err)
	}
	if err := apply(backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{
		{Family: "d", Qualifier: "a", Value: []byte("1"), Timestamp: 1}, {Family: "d", Qualifier: "", Value: []byte("empty q"), Timestamp: 1},
		{Family: "x", Qualifier: "a", Value: []byte{}, Timestamp: 1},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(backends.Mutation{Key: []byte("r"), Delete: true, Cells: []backends.Cell{{Family: "d"}}}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Read(ctx, "t", [][]byte{[]byte("r")}, backends.ReadOptions{})
	if err != nil || len(rows[0].Cells) != 1 || rows[0].Cells[0].Family != "x" || rows[0].Cells[0].Value == nil {
		t.Fatalf("after deleting family d: %+v, %v", rows, err)
	}
	for _, splits := range [][][]byte{{[]byte("b"), []byte("a")}, {[]byte("a"), []byte("a")}, {{}}} {
		if err := s.CreateTable(ctx, "bad", backends.TableOptions{SplitKeys: splits}); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("split keys %q: %v", splits, err)
		}
	}
	if err := s.CreateTable(ctx, "", backends.TableOptions{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("empty table name: %v", err)
	}
}

// TestOpenConfig: Open refuses a Config without a Path and a ctx already ended, and a deadline of
// its ctx sooner than LockTimeout bounds the wait for a held file.
func TestOpenConfig(t *testing.T) {
	if _, err := local.Open(t.Context(), local.Config{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("Open without a Path: %v, want ErrInvalidArgument", err)
	}
	path := filepath.Join(t.TempDir(), "brine.db")
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := local.Open(ended, local.Config{Path: path}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with an ended ctx: %v, want context.Canceled", err)
	}
	held, err := local.Open(t.Context(), local.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := local.Open(ctx, local.Config{Path: path, LockTimeout: time.Minute}); !errors.Is(err, local.ErrLocked) {
		t.Fatalf("Open of a held file: %v, want ErrLocked", err)
	}
	if waited := time.Since(began); waited > 30*time.Second {
		t.Fatalf("Open waited %v: the ctx's deadline (100ms) did not bound the minute's LockTimeout", waited)
	}
}
