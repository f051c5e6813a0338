package periodtest

import (
	"errors"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// testExpireDuringScan drops a period (through another handle, as another process would) while a
// scan over every period runs: the scan either returns exactly the rows it would have without the
// drop, or ends with ErrPeriodExpired after a prefix of them. A scan started after the drop by a
// handle that has not refreshed fails the same way; after Refresh it reads the other periods.
func testExpireDuringScan(t *testing.T, s Store) {
	for _, lt := range s.layouts() {
		t.Run(lt.name, func(t *testing.T) {
			ctx := ctxFor(t)
			c := client.New(s.Open(t), client.WithPrefetch(1), client.WithConcurrency(2))
			t.Cleanup(func() { c.Close() })
			sch := testkit.Schema(t, lt.schema)
			base := tableName(s, "expire", lt)
			p := newTable(t, c, base, lt.field)
			ref := months(t, p, sch, lt, time.April, 6)
			other, err := periods.Open(ctx, c, base, nil)
			if err != nil {
				t.Fatal(err)
			}

			next, stop := iter.Pull2(p.Scan(ctx, client.Range{}, client.BatchSize(1)))
			var got []string
			for range 5 {
				row, err, ok := next()
				if !ok || err != nil {
					t.Fatalf("first rows: ok=%v err=%v", ok, err)
				}
				got = append(got, string(row.Key))
			}
			feb := base + "_2026_02"
			if err := other.DropPeriod(ctx, feb); err != nil {
				t.Fatal(err)
			}
			var scanErr error
			for {
				row, err, ok := next()
				if !ok {
					break
				}
				if err != nil {
					scanErr = err
					break
				}
				got = append(got, string(row.Key))
			}
			stop()
			t.Logf("scan during the drop: %d rows, err %v", len(got), scanErr)
			switch {
			case scanErr == nil:
				if !slices.Equal(got, ref) {
					t.Errorf("scan finished without error but with %d rows, want all %d", len(got), len(ref))
				}
			case errors.Is(scanErr, periods.ErrExpired):
				if len(got) > len(ref) || !slices.Equal(got, ref[:len(got)]) {
					t.Errorf("scan failed (%v) after %d rows that are not a prefix of the result", scanErr, len(got))
				}
			default:
				t.Errorf("scan failed with %v, want ErrPeriodExpired or no error", scanErr)
			}

			// The stale handle still routes reads to February: a clear error, not a silent gap.
			if _, err := collect(p.Scan(ctx, client.Range{})); !errors.Is(err, periods.ErrExpired) {
				t.Errorf("scan by a stale handle: %v, want ErrPeriodExpired", err)
			}
			if err := p.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			febRows := within(ref, span(sch, lt, "", date(2026, 2, 1), date(2026, 3, 1)))
			if lt.field != 0 {
				febRows = nil
				for _, h := range []string{"a", "b"} {
					febRows = append(febRows, within(ref, span(sch, lt, h, date(2026, 2, 1), date(2026, 3, 1)))...)
				}
			}
			want := slices.DeleteFunc(slices.Clone(ref), func(k string) bool { return slices.Contains(febRows, k) })
			if len(febRows) == 0 || len(want) != len(ref)-len(febRows) {
				t.Fatalf("feb has %d rows: the test is wrong", len(febRows))
			}
			if got, err := collect(p.Scan(ctx, client.Range{})); err != nil || !slices.Equal(got, want) {
				t.Errorf("scan after Refresh: %d rows, %v; want %d", len(got), err, len(want))
			}
			if err := p.Put(ctx, lt.key(sch, "a", date(2026, 2, 15)), cells("v")...); !errors.Is(err, periods.ErrNoPeriod) {
				t.Errorf("Put into the dropped period: %v, want ErrNoPeriod", err)
			}
		})
	}
}
