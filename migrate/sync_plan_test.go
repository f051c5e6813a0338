package migrate

import (
	"fmt"
	"testing"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
)

func TestPlanChange(t *testing.T) {
	c := func(f, q, v string, ts int64) client.Cell {
		return client.Cell{Family: f, Qualifier: q, Value: []byte(v), Timestamp: ts}
	}
	col := func(f, q string) client.Column { return client.Column{Family: f, Qualifier: q} }
	row := func(cells ...client.Cell) client.Row { return client.Row{Key: []byte("k"), Cells: cells} }
	for _, tc := range []struct {
		name  string
		d     compare.Difference
		all   bool
		whole client.Column // deleted only with its row
		want  Change
	}{
		{"row only in the source", compare.Difference{Kind: compare.OnlyInA, A: row(c("d", "a", "1", 5))}, false, client.Column{},
			Change{Put: []client.Cell{c("d", "a", "1", 5)}}},
		{"row only in the target", compare.Difference{Kind: compare.OnlyInB, B: row(c("d", "a", "1", 5))}, false, client.Column{},
			Change{DeleteRow: true}},
		{"column deleted from the source", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "1", 5), c("d", "c", "3", 5)), B: row(c("d", "a", "1", 5), c("d", "b", "2", 5), c("d", "c", "3", 5))}, false, client.Column{},
			Change{Delete: []client.Column{col("d", "b")}}},
		{"newer in the source: a put hides the target's", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "2", 9)), B: row(c("d", "a", "1", 5))}, false, client.Column{},
			Change{Put: []client.Cell{c("d", "a", "2", 9)}}},
		{"newer in the target: that version deleted, the source's put", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "1", 5), c("d", "b", "x", 5)), B: row(c("d", "a", "2", 9), c("d", "b", "x", 5))}, false, client.Column{},
			Change{DeleteVersions: []client.Cell{{Family: "d", Qualifier: "a", Timestamp: 9}}, Put: []client.Cell{c("d", "a", "1", 5)}}},
		{"same stamp, another value: put over, nothing deleted", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "1", 5)), B: row(c("d", "a", "2", 5))}, false, client.Column{},
			Change{Put: []client.Cell{c("d", "a", "1", 5)}}},
		{"every version: an extra old one in the target", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "2", 9)), B: row(c("d", "a", "2", 9), c("d", "a", "1", 5))}, true, client.Column{},
			Change{DeleteVersions: []client.Cell{{Family: "d", Qualifier: "a", Timestamp: 5}}}},
		{"every version: one changed, one extra, one missing", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "3", 9), c("d", "a", "1", 5)), B: row(c("d", "a", "x", 9), c("d", "a", "2", 7))}, true, client.Column{},
			Change{DeleteVersions: []client.Cell{{Family: "d", Qualifier: "a", Timestamp: 7}}, Put: []client.Cell{c("d", "a", "3", 9), c("d", "a", "1", 5)}}},
		{"newer in the target, an indexed column: the row rewritten", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "x", "1", 5)), B: row(c("d", "x", "2", 9))}, false, col("d", "x"),
			Change{DeleteRow: true, Put: []client.Cell{c("d", "x", "1", 5)}}},
		{"every version: one missing in the target", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "2", 9), c("d", "a", "1", 5)), B: row(c("d", "a", "2", 9))}, true, client.Column{},
			Change{Put: []client.Cell{c("d", "a", "1", 5)}}},
		{"an indexed column: the row rewritten", compare.Difference{Kind: compare.Changed,
			A: row(c("d", "a", "1", 5)), B: row(c("d", "a", "1", 5), c("d", "x", "2", 5))}, false, col("d", "x"),
			Change{DeleteRow: true, Put: []client.Cell{c("d", "a", "1", 5)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.d.Key, tc.want.Key = []byte("k"), []byte("k")
			if got := planChange(tc.d, tc.all, func(c client.Column) bool { return c == tc.whole }); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("PlanChange = %+v, want %+v", got, tc.want)
			}
		})
	}
}
