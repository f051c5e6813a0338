package client_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestKeyRegexFilterKeySchema: on a table with a key schema a key regex matches the printed key
// (issue 22: "^O0001" matched no row, as the encoded key starts with a tag byte); on one without,
// the key's bytes.
func TestKeyRegexFilterKeySchema(t *testing.T) {
	ctx := context.Background()
	ks := testkit.Schema(t, "id,n:int64")
	c := client.New(memory.New())
	defer c.Close()
	var muts []client.Mutation
	for _, id := range []string{"O0001", "O0002", "O00010"} {
		for n := range int64(3) {
			k, err := ks.Encode(id, n)
			if err != nil {
				t.Fatal(err)
			}
			muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: []byte("v")}}})
		}
	}
	// A key written around the schema, which it cannot decode.
	muts = append(muts, client.Mutation{Key: []byte("O0001-raw"), Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: []byte("v")}}})
	configs := map[string]client.TableConfig{
		"schema": {KeySchema: ks},
		"meta":   {Meta: map[string]string{client.MetaKeySchema: "id,n:int64"}}, // as the CLI stored it before KeySchema
		"none":   {},
	}
	for name, cfg := range configs {
		cfg.Salter = testkit.Salter(t, "hash:4")
		tbl, err := c.CreateTable(ctx, name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
			t.Fatal(err, errs)
		}
	}
	printed := func(id string, ns ...int64) []string {
		var out []string
		for _, n := range ns {
			k, _ := ks.Encode(id, n)
			out = append(out, string(k))
		}
		return out
	}
	o1 := printed("O0001", 0, 1, 2)
	tests := []struct {
		table string
		f     client.Filter
		want  []string
	}{
		{"schema", client.KeyRegexFilter("^O0001,"), o1},
		{"schema", client.KeyRegexFilter("^O0001"), append(printed("O0001", 0, 1, 2), printed("O00010", 0, 1, 2)...)},
		{"schema", client.KeyRegexFilter(",2$"), append(append(printed("O0001", 2), printed("O00010", 2)...), printed("O0002", 2)...)},
		{"meta", client.KeyRegexFilter("^O0001,"), o1},
		// An undecodable key fails the leaf whatever the pattern, and passes its negation.
		{"schema", client.KeyRegexFilter(""), nil},
		{"schema", client.NotFilter(client.AnyFilter(client.KeyRegexFilter("^O0001"), client.KeyRegexFilter(","))), []string{"O0001-raw"}},
		{"none", client.KeyRegexFilter("^O0001"), []string{"O0001-raw"}},
		{"none", client.KeyRegexFilter("^sO0001\x00\x01"), o1},
	}
	// The "" pattern on the schema table: every decodable key.
	tests[4].want = append(append(append([]string(nil), o1...), printed("O00010", 0, 1, 2)...), printed("O0002", 0, 1, 2)...)
	for _, tt := range tests {
		tbl, err := c.OpenTable(ctx, tt.table, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for row, err := range tbl.Scan(ctx, client.Range{}, client.RowFilter(tt.f)) {
			if err != nil {
				t.Fatalf("%s %q: %v", tt.table, tt.f.Pattern, err)
			}
			got = append(got, string(row.Key))
		}
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: scan %+v = %q, want %q", tt.table, tt.f, got, want)
		}
		if len(want) == 0 {
			continue
		}
		// Get and GetMany match the same way.
		if _, err := tbl.Get(ctx, []byte(want[0]), client.RowFilter(tt.f)); err != nil {
			t.Errorf("%s: get %q %+v: %v", tt.table, want[0], tt.f, err)
		}
		rows, err := tbl.GetMany(ctx, [][]byte{muts[0].Key, muts[len(muts)-1].Key, []byte(want[0])}, client.RowFilter(tt.f))
		if err != nil || len(rows[2].Cells) == 0 {
			t.Errorf("%s: get many %+v: %v, last row %v", tt.table, tt.f, err, rows)
		}
	}
}

func TestCreateTableKeySchema(t *testing.T) {
	ctx := context.Background()
	ks := testkit.Schema(t, "id,n:int64")
	tests := []struct {
		name    string
		cfg     client.TableConfig
		wantErr bool
		want    string // the schema the opened table has
	}{
		{"schema", client.TableConfig{KeySchema: ks}, false, "id,n:int64"},
		{"meta agrees", client.TableConfig{KeySchema: ks, Meta: map[string]string{client.MetaKeySchema: "id,n:int64"}}, false, "id,n:int64"},
		{"meta disagrees", client.TableConfig{KeySchema: ks, Meta: map[string]string{client.MetaKeySchema: "id"}}, true, ""},
		{"meta not a schema", client.TableConfig{Meta: map[string]string{client.MetaKeySchema: "id:nope"}}, true, ""},
		{"none", client.TableConfig{}, false, ""},
	}
	for _, tt := range tests {
		b := memory.New()
		c := client.New(b)
		tt.cfg.Salter = testkit.Salter(t, "hash:2")
		created, err := c.CreateTable(ctx, "t", tt.cfg)
		if tt.wantErr {
			if !errors.Is(err, backends.ErrInvalidArgument) {
				t.Errorf("%s: create: %v, want ErrInvalidArgument", tt.name, err)
			}
			c.Close()
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		opened, err := c.OpenTable(ctx, "t", nil)
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := b.TableMeta(ctx, "t")
		for _, tbl := range []*client.Table{created, opened} {
			got := ""
			if tbl.KeySchema() != nil {
				got = tbl.KeySchema().String()
			}
			if got != tt.want || meta[client.MetaKeySchema] != tt.want {
				t.Errorf("%s: KeySchema %q, stored %q; want %q", tt.name, got, meta[client.MetaKeySchema], tt.want)
			}
		}
		c.Close()
	}
}

// Errors about a key of a table with a key schema print the key as the schema prints it (the CLI's
// form), not its encoded bytes; keys the schema cannot read, and tables without one, print bytes.
func TestErrorsPrintKeysBySchema(t *testing.T) {
	ctx := context.Background()
	ks := testkit.Schema(t, "id,n:int64")
	c := client.New(memory.New())
	defer c.Close()
	typed, err := c.CreateTable(ctx, "typed", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: ks})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.CreateTable(ctx, "raw", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	k999, err := ks.Encode("u", int64(999))
	if err != nil {
		t.Fatal(err)
	}
	k1, err := ks.Encode("u", int64(1))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"get, typed", func() error { _, err := typed.Get(ctx, k999); return err }(), `get "u,999": ` + client.ErrNotFound.Error()},
		{"get, not of the schema", func() error { _, err := typed.Get(ctx, []byte("x")); return err }(), `get "x": ` + client.ErrNotFound.Error()},
		{"get, no schema", func() error { _, err := raw.Get(ctx, []byte("x")); return err }(), `get "x": ` + client.ErrNotFound.Error()},
		{"put without cells", typed.Put(ctx, k999), `put "u,999": ` + client.ErrInvalidArgument.Error() + `: no cells`},
	}
	for _, tc := range tests {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	_, err = testkit.CountErr(typed.Scan(ctx, client.RowRange(k999, k1)))
	if !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("reversed scan: %v, want ErrInvalidArgument", err)
	}
	if want := `range start "u,999" is after its end "u,1"`; !strings.Contains(err.Error(), want) {
		t.Errorf("reversed scan: %v, want it to say %s", err, want)
	}
}
