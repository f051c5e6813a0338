//go:build integration

package integration

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends/tablestore/dropin"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// tsScanKeys: monotonic keys (more than a thousand, so that every bucket reads many small pages),
// keys made of 0x00 and 0xFF bytes, keys that are prefixes of each other, and keys under a few
// 5-byte user ids.
func tsScanKeys() [][]byte {
	var ks [][]byte
	for i := range 1500 {
		ks = append(ks, binary.BigEndian.AppendUint64([]byte("o"), uint64(i)))
	}
	ks = append(ks, []byte{0x00}, []byte{0x00, 0x00}, []byte{0x00, 0x01}, []byte{0x00, 0xFF}, []byte{0xFF},
		[]byte{0xFF, 0x00}, []byte{0xFF, 0xFF}, []byte{0xFF, 0xFF, 0xFF},
		[]byte("p"), []byte("pa"), []byte("pab"), []byte("pb"), []byte("q\x00"), []byte("q\xff"))
	for u := 1; u <= 6; u++ {
		for j := range 20 {
			ks = append(ks, binary.BigEndian.AppendUint32(fmt.Appendf(nil, "u%03d/", u), uint32(j)))
		}
	}
	return ks
}

func tsOrder(i int) []byte { return binary.BigEndian.AppendUint64([]byte("o"), uint64(i)) }

// TestTablestoreScanEquivalence: for two salting specs (hash:16 fans every range out to 16 buckets;
// hash:16:prefix=5 prunes a range inside one user id to one bucket), every range shape, limit,
// direction and cursor paging through brine's client returns exactly the rows, values and order of
// the plain SDK reading an unsalted copy. Pages are small (BatchSize 37, and the local server caps a
// GetRange at 50 rows), so a full scan takes many pages per bucket.
func TestTablestoreScanEquivalence(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		keys := tsScanKeys()
		ref := e.reference(t)
		e.rawPut(t, ref, keys)
		if n := len(e.rawRange(t, ref, nil, nil)); n != len(keys) || n <= 1000 {
			t.Fatalf("reference holds %d rows, want %d (> 1000)", n, len(keys))
		}
		// The reference of a range: the plain SDK reads [start, end) of the unsalted table.
		want := func(r client.Range) []tsRow {
			if len(r.End) > 0 && bytes.Compare(r.Start, r.End) >= 0 {
				return nil
			}
			return e.rawRange(t, ref, r.Start, r.End)
		}

		ranges := []struct {
			name string
			r    client.Range
		}{
			{"full", client.Range{}},
			{"monotonic slice", client.RowRange(tsOrder(100), tsOrder(1300))},
			{"from a key", client.InfiniteRange(tsOrder(1490))},
			{"to a key", client.RowRange(nil, []byte{0x00, 0xFF})},
			{"key bounds", client.RowRange(tsOrder(5), tsOrder(6))},
			{"single row", client.SingleRow(tsOrder(777))},
			{"one user", client.PrefixRange([]byte("u003/"))},
			{"users", client.RowRange([]byte("u002/"), []byte("u005/\x00\x00\x00\x05"))},
			{"prefix keys", client.PrefixRange([]byte("p"))},
			{"between prefix keys", client.RowRange([]byte("pa"), []byte("pb"))},
			{"0x00 keys", client.RowRange([]byte{0x00}, []byte{0x00, 0x01})},
			{"0x00 prefix", client.PrefixRange([]byte{0x00})},
			{"0xFF keys", client.InfiniteRange([]byte{0xFF})},
			{"0xFF prefix", client.PrefixRange([]byte{0xFF, 0xFF})},
			{"q with 0x00 and 0xFF", client.PrefixRange([]byte("q"))},
			{"empty", client.RowRange([]byte("b"), []byte("c"))},
			{"start equals end", client.RowRange([]byte("p"), []byte("p"))},
		}
		for _, spec := range []string{"hash:16", "hash:16:prefix=5"} {
			tbl := e.salted(t, spec)
			tsImport(t, tbl, keys, client.ImportOptions{BatchRows: 200})
			t.Run(spec, func(t *testing.T) {
				// A range whose start is after its end is refused before anything is read, either way
				// (a descending scan is the ascending range and Reverse()).
				for _, reverse := range []bool{false, true} {
					var opts []client.ReadOption
					if reverse {
						opts = append(opts, client.Reverse())
					}
					rows, err := tsScanErr(testkit.Context(t, time.Minute), tbl, client.RowRange([]byte("u"), []byte("p")), opts...)
					if len(rows) != 0 || !errors.Is(err, client.ErrInvalidArgument) {
						t.Fatalf("inverted range, reverse=%v: %d rows, %v; want ErrInvalidArgument", reverse, len(rows), err)
					}
				}
				for _, rc := range ranges {
					w := want(rc.r)
					if (len(w) == 0) != (rc.name == "empty" || rc.name == "start equals end") {
						t.Fatalf("%s: the reference holds %d rows", rc.name, len(w))
					}
					for _, reverse := range []bool{false, true} {
						wr := w
						var opts []client.ReadOption
						if reverse {
							wr = tsReversed(w)
							opts = append(opts, client.Reverse())
						}
						for _, limit := range []int{0, 1, 10, 999, 5000} {
							o := append(opts, client.BatchSize(37), client.Limit(limit))
							got := tsScan(t, tbl, rc.r, o...)
							exp := wr
							if limit > 0 && len(exp) > limit {
								exp = exp[:limit]
							}
							if d := tsDiff(got, exp); d != "" {
								t.Fatalf("%s reverse=%v limit=%d: %s", rc.name, reverse, limit, d)
							}
						}
						// Cursor paging: pages of 128 rows, each resumed after the last key of the one
						// before, add up to the whole range.
						var paged []tsRow
						for page := 0; ; page++ {
							o := append(opts, client.Limit(128), client.BatchSize(37))
							if len(paged) > 0 {
								o = append(o, client.ResumeAfter([]byte(paged[len(paged)-1].Key)))
							}
							got := tsScan(t, tbl, rc.r, o...)
							paged = append(paged, got...)
							if len(got) < 128 {
								break
							}
							if page > len(keys) {
								t.Fatal("cursor paging does not end")
							}
						}
						if d := tsDiff(paged, wr); d != "" {
							t.Fatalf("%s reverse=%v cursor pages: %s", rc.name, reverse, d)
						}
					}
				}
			})
			// The SDK drop-in reads the table brine's client wrote (spec from the meta table), with
			// GetRange pages of 100 rows, as the plain SDK reads the unsalted copy.
			t.Run(spec+"/dropin", func(t *testing.T) {
				d := dropin.New(e.sdk, dropin.WithLogger(testkit.Logger(t, slog.LevelWarn)))
				for _, dir := range []ots.Direction{ots.FORWARD, ots.BACKWARD} {
					start, end := tsInf("pk", -1), tsInf("pk", +1)
					exp := want(client.Range{})
					if dir == ots.BACKWARD {
						start, end, exp = end, start, tsReversed(exp)
					}
					crit := &ots.RangeRowQueryCriteria{TableName: tbl.Name(), StartPrimaryKey: start, EndPrimaryKey: end,
						Direction: dir, MaxVersion: 1, Limit: 100}
					var got []tsRow
					for page := 0; crit.StartPrimaryKey != nil; page++ {
						resp, err := d.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: crit})
						if err != nil {
							t.Fatalf("dropin GetRange page %d: %v", page, err)
						}
						if resp.NextStartPrimaryKey != nil && len(resp.Rows) != 100 {
							t.Fatalf("page %d: %d rows before the end, want 100", page, len(resp.Rows))
						}
						got = append(got, tsSDKRows(resp.Rows)...)
						crit.StartPrimaryKey = resp.NextStartPrimaryKey
					}
					if diff := tsDiff(got, exp); diff != "" {
						t.Fatalf("dropin %v: %s", dir, diff)
					}
				}
			})
			// Pruning, counted by the local server: a range inside one user id reads one bucket under
			// hash:16:prefix=5, all 16 under hash:16.
			if srv := tg.srv; srv != nil {
				srv.ResetStats()
				if got := tsScan(t, tbl, client.PrefixRange([]byte("u003/"))); len(got) != 20 {
					t.Fatalf("%s: %d rows of one user", spec, len(got))
				}
				reqs, wantReqs := srv.Stats()["GetRange"].Requests, 16
				if spec == "hash:16:prefix=5" {
					wantReqs = 1
				}
				if reqs != wantReqs {
					t.Fatalf("%s: %d GetRange requests for one user's range, want %d", spec, reqs, wantReqs)
				}
			}
		}
	}, tablestoretest.WithPageCap(50, 0))
}
