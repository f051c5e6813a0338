package periods_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// TestScanErrors: a scan refuses a range whose start is after its end, as client.Table.Scan does,
// with or without periods to read; an error names the logical table, and a key prints as its schema
// prints it.
func TestScanErrors(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	month, _ := periods.ParseInterval("month")
	sch := testkit.Schema(t, "ts:int64,host")
	p, err := periods.Create(ctx, c, "ev", periods.Config{Interval: month, Table: client.TableConfig{Salter: testkit.Salter(t, "hash:2"), KeySchema: sch}})
	if err != nil {
		t.Fatal(err)
	}
	reversed := client.RowRange([]byte("z"), []byte("a"))
	for _, ahead := range []int{-1, 1} {
		if ahead >= 0 {
			if _, err := p.CreateAhead(ctx, time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), ahead, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, opts := range [][]client.ReadOption{nil, {client.Reverse()}} {
			for _, err := range p.Scan(ctx, reversed, opts...) {
				if !errors.Is(err, client.ErrInvalidArgument) || !strings.HasPrefix(err.Error(), `period table "ev": `) {
					t.Errorf("%d periods, reversed range: %v, want ErrInvalidArgument naming ev", len(p.Periods()), err)
				}
			}
		}
	}
	key, _ := sch.Encode(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), "web1")
	err = p.Put(ctx, key, testkit.Cell("q", "v"))
	if !errors.Is(err, periods.ErrNoPeriod) || !strings.Contains(err.Error(), "1803859200000") || !strings.Contains(err.Error(), "web1") {
		t.Errorf("put outside every period: %v, want ErrNoPeriod with the key as its schema prints it", err)
	}
}
