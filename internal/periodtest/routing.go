package periodtest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

func tableName(s Store, base string, lt layout) string {
	return name(s, base+"_"+strings.ReplaceAll(lt.name, "-", "_"))
}

// testRouting writes keys at the edges of periods, in both time directions, and checks the table
// each lands in.
func testRouting(t *testing.T, s Store) {
	for _, lt := range s.layouts() {
		t.Run(lt.name, func(t *testing.T) {
			ctx := ctxFor(t)
			c := client.New(s.Open(t))
			t.Cleanup(func() { c.Close() })
			sch := testkit.Schema(t, lt.schema)
			base := tableName(s, "route", lt)
			p := newTable(t, c, base, lt.field)
			created, err := p.CreateAhead(ctx, date(2026, 10, 15), 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			oct, nov := base+"_2026_10", base+"_2026_11"
			if len(created) != 2 || created[0].Table != oct || created[1].Table != nov {
				t.Fatalf("CreateAhead created %+v, want %s and %s", created, oct, nov)
			}
			ms := time.Millisecond
			cases := []struct {
				ts    time.Time
				table string // "": no live period
			}{
				{date(2026, 12, 1), ""},
				{date(2026, 12, 1).Add(-ms), nov},
				{date(2026, 11, 1), nov},
				{date(2026, 11, 1).Add(-ms), oct},
				{date(2026, 10, 1), oct},
				{date(2026, 10, 1).Add(-ms), ""},
			}
			check := func(t *testing.T, key []byte, want string) {
				t.Helper()
				for _, tbl := range []string{oct, nov} {
					pt, err := p.PeriodTable(tbl)
					if err != nil {
						t.Fatal(err)
					}
					_, err = pt.Get(ctx, key)
					if found := err == nil; found != (tbl == want) {
						t.Errorf("key %q in %s: found=%v (err %v), want it only in %q", key, tbl, found, err, want)
					}
				}
			}
			// Put, in descending time order.
			for _, tc := range cases {
				key := lt.key(sch, "put", tc.ts)
				err := p.Put(ctx, key, cells("v")...)
				if tc.table == "" {
					if !errors.Is(err, periods.ErrNoPeriod) {
						t.Errorf("Put at %s: %v, want ErrNoPeriod", tc.ts, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Put at %s: %v", tc.ts, err)
				}
				check(t, key, tc.table)
				if _, err := p.Get(ctx, key); err != nil {
					t.Errorf("Get at %s: %v", tc.ts, err)
				}
			}
			// Apply: a key outside every period fails alone.
			var muts []client.Mutation
			for _, tc := range cases {
				muts = append(muts, client.Mutation{Key: lt.key(sch, "apply", tc.ts), Cells: cells("v")})
			}
			rowErrs, err := p.Apply(ctx, muts)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			for i, tc := range cases {
				var rowErr error
				if rowErrs != nil {
					rowErr = rowErrs[i]
				}
				if tc.table == "" {
					if !errors.Is(rowErr, periods.ErrNoPeriod) {
						t.Errorf("Apply row %d at %s: %v, want ErrNoPeriod", i, tc.ts, rowErr)
					}
					continue
				}
				if rowErr != nil {
					t.Errorf("Apply row %d at %s: %v", i, tc.ts, rowErr)
				}
				check(t, muts[i].Key, tc.table)
			}
			// A key without the time field is refused before anything is sent.
			if err := p.Put(ctx, []byte("no-time"), cells("v")...); !errors.Is(err, client.ErrInvalidKey) {
				t.Errorf("Put of a key without a time: %v, want ErrInvalidKey", err)
			}
		})
	}
}
