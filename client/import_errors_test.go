package client_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// eventsTable is a hash:16 table keyed host,ts:int64:desc on the embedded store.
func eventsTable(t *testing.T) (*client.Table, *keys.Schema) {
	t.Helper()
	b, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "data.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(b)
	t.Cleanup(func() { c.Close() })
	ks := testkit.Schema(t, "host,ts:int64:desc")
	tbl, err := c.CreateTable(t.Context(), "events", client.TableConfig{Salter: testkit.Salter(t, "hash:16"), KeySchema: ks})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, ks
}

// eventKey is the key of host and ts, its host padded so that the key is n bytes long.
func eventKey(t *testing.T, ks *keys.Schema, host string, ts int64, n int) []byte {
	t.Helper()
	k, err := ks.Encode(host, ts)
	if err != nil {
		t.Fatal(err)
	}
	if n > len(k) {
		if k, err = ks.Encode(host+strings.Repeat("h", n-len(k)), ts); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

var rowNumber = regexp.MustCompile(`\brow (\d+)`)

// A key over the store's limit is reported with its own size and the stored one (salt included),
// whichever call wrote it; an import's error names the input row only, not a position in a batch.
func TestOversizedKeyReported(t *testing.T) {
	tbl, ks := eventsTable(t)
	ctx := t.Context()
	long := eventKey(t, ks, "web", 1, 33012)
	if len(long) != 33012 {
		t.Fatalf("key of %d bytes, want 33012", len(long))
	}
	cell := testkit.Cell("q", "v")
	const badRow = 490
	tests := []struct {
		name  string
		write func() error
		row   int // the input row an error must name, -1 for none
	}{
		{"Put", func() error { return tbl.Put(ctx, long, cell) }, -1},
		{"Apply", func() error {
			muts := []client.Mutation{{Key: eventKey(t, ks, "a", 1, 0), Cells: []client.Cell{cell}}, {Key: long, Cells: []client.Cell{cell}}}
			errs, err := tbl.Apply(ctx, muts)
			if err != nil || errs == nil || errs[0] != nil {
				return fmt.Errorf("Apply = %v, %v; want the second row refused alone", errs, err)
			}
			return errs[1]
		}, 1},
		{"Import", func() error {
			rows := func(yield func(client.ImportRow, error) bool) {
				for i := range 1000 {
					k := eventKey(t, ks, fmt.Sprint("host", i%7), int64(i), 0)
					if i == badRow {
						k = long
					}
					if !yield(client.ImportRow{Mutation: client.Mutation{Key: k, Cells: []client.Cell{cell}}}, nil) {
						return
					}
				}
			}
			var failed []client.FailedRow
			_, err := tbl.Import(ctx, rows, client.ImportOptions{Workers: 2, OnFailure: func(f client.FailedRow) { failed = append(failed, f) }})
			if !errors.Is(err, client.ErrRowsFailed) || len(failed) != 1 || failed[0].Index != badRow {
				return fmt.Errorf("Import = %v, failed %+v; want input row %d failed alone", err, failed, badRow)
			}
			return failed[0].Err
		}, badRow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.write()
			if !errors.Is(err, client.ErrInvalidKey) {
				t.Fatalf("error %v, want ErrInvalidKey", err)
			}
			msg := err.Error()
			for _, want := range []string{"(a key of 33012 bytes)", "(the key is 33012 bytes, 33013 stored with its 1-byte salt)"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			for _, m := range rowNumber.FindAllStringSubmatch(msg, -1) {
				if m[1] != fmt.Sprint(tc.row) {
					t.Errorf("error %q names row %s; want only row %d, the input's", msg, m[1], tc.row)
				}
			}
		})
	}
}

// The rows a cancelled import held are each reported with their input row and key, wrapping ctx's
// error, and counted as cancelled; the import's error wraps ctx's too.
func TestImportCancelledRowsReported(t *testing.T) {
	tbl, ks := eventsTable(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	const cancelAt = 3000
	keyOf := map[int64][]byte{}
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range 10000 {
			if i == cancelAt {
				cancel()
			}
			k := eventKey(t, ks, fmt.Sprint("host", i%7), int64(i), 0)
			keyOf[int64(i)] = k
			if !yield(client.ImportRow{Mutation: client.Mutation{Key: k, Cells: []client.Cell{testkit.Cell("q", "v")}}}, nil) {
				return
			}
		}
	}
	var failed []client.FailedRow
	stats, err := tbl.Import(ctx, rows, client.ImportOptions{Workers: 2, BatchRows: 100,
		OnFailure: func(f client.FailedRow) { failed = append(failed, f) }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import = %v, want an error wrapping context.Canceled", err)
	}
	if stats.Cancelled == 0 || stats.Cancelled != stats.Failed || int64(len(failed)) != stats.Failed || stats.Read != stats.Written+stats.Failed {
		t.Fatalf("stats %+v, %d rows reported; want every failed row cancelled and reported", stats, len(failed))
	}
	for _, f := range failed {
		text, ferr := ks.Format(keyOf[f.Index])
		if ferr != nil {
			t.Fatal(ferr)
		}
		prefix := fmt.Sprintf("input row %d (key %q)", f.Index, text)
		if !errors.Is(f.Err, context.Canceled) || !strings.HasPrefix(f.Err.Error(), prefix) || string(f.Row.Key) != string(keyOf[f.Index]) {
			t.Fatalf("failed row %d: %v; want %q..., wrapping context.Canceled", f.Index, f.Err, prefix)
		}
	}
}
