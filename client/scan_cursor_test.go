package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// Table.Scan refuses a ResumeAfter cursor outside its range, as Index.Page does: such a cursor
// belongs to another query. One inside resumes after it, in either direction.
func TestScanRefusesCursorOutsideRange(t *testing.T) {
	ctx := t.Context()
	c := client.New(memory.New())
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a1", "a2", "a3", "b1", "b2"} {
		if err := tbl.Put(ctx, []byte(k), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	a := client.PrefixRange([]byte("a"))
	tests := []struct {
		name    string
		r       client.Range
		cursor  string
		reverse bool
		want    []string // nil: refused with ErrInvalidArgument
	}{
		{"inside", a, "a1", false, []string{"a2", "a3"}},
		{"inside, reverse", a, "a3", true, []string{"a2", "a1"}},
		{"at the start", a, "a", false, []string{"a1", "a2", "a3"}},
		{"another prefix's", a, "b1", false, nil},
		{"at the end", a, "b", false, nil},
		{"before the start", client.PrefixRange([]byte("b")), "a3", false, nil},
		{"before the start, reverse", client.PrefixRange([]byte("b")), "a3", true, nil},
		{"unbounded range", client.Range{}, "b1", false, []string{"b2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := []client.ReadOption{client.ResumeAfter([]byte(tc.cursor))}
			if tc.reverse {
				opts = append(opts, client.Reverse())
			}
			for name, scan := range map[string]func() ([]client.Row, error){
				"Scan": func() ([]client.Row, error) { return testkit.CollectErr(tbl.Scan(ctx, tc.r, opts...)) },
				"ScanTables": func() ([]client.Row, error) {
					return testkit.CollectErr(c.ScanTables(ctx, []*client.Table{tbl}, tc.r, opts...))
				},
			} {
				rows, err := scan()
				if tc.want == nil {
					if !errors.Is(err, client.ErrInvalidArgument) || len(rows) != 0 {
						t.Errorf("%s after %q: %d rows, %v; want ErrInvalidArgument", name, tc.cursor, len(rows), err)
					}
					continue
				}
				if got := testkit.KeyStrings(rows); err != nil || !slices.Equal(got, tc.want) {
					t.Errorf("%s after %q = %q, %v; want %q", name, tc.cursor, got, err, tc.want)
				}
			}
		})
	}
}
