package client_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// CreateOrOpenTable of an existing table refuses a key schema or families other than the stored
// ones, and names each difference; the same declaration (families in any order) opens it.
func TestCreateOrOpenTableRefusesChangedDeclaration(t *testing.T) {
	ctx := t.Context()
	b, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "data.db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(b)
	defer c.Close()
	s := testkit.Salter(t, "hash:16")
	created := client.TableConfig{Salter: s, KeySchema: testkit.Schema(t, "host,ts:int64:desc"), Families: []string{"d", "e"}}
	if _, err := c.CreateOrOpenTable(ctx, "events", created); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  client.TableConfig
		want []string // what the error names; none: it opens
	}{
		{"same", created, nil},
		{"families in another order", client.TableConfig{Salter: s, KeySchema: created.KeySchema, Families: []string{"e", "d"}}, nil},
		{"another key schema", client.TableConfig{Salter: s, KeySchema: testkit.Schema(t, "host,ts:int64"), Families: created.Families},
			[]string{`key schema "host,ts:int64" given`, `the table's is "host,ts:int64:desc"`}},
		{"no key schema", client.TableConfig{Salter: s, Families: created.Families},
			[]string{`key schema none given`}},
		{"other families", client.TableConfig{Salter: s, KeySchema: created.KeySchema, Families: []string{"zz"}},
			[]string{"families [zz] given, the table's are [d e]"}},
		{"default family", client.TableConfig{Salter: s, KeySchema: created.KeySchema},
			[]string{"families [d] given"}},
		{"both", client.TableConfig{Salter: s, KeySchema: testkit.Schema(t, "id:uint64"), Families: []string{"zz"}},
			[]string{`key schema "id:uint64" given`, "families [zz] given"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := c.CreateOrOpenTable(ctx, "events", tc.cfg)
			if tc.want == nil {
				if err != nil || tbl.KeySchema().String() != created.KeySchema.String() {
					t.Fatalf("CreateOrOpenTable = %v; want the table, key schema %s", err, created.KeySchema)
				}
				return
			}
			if !errors.Is(err, client.ErrSchemaMismatch) || tbl != nil {
				t.Fatalf("CreateOrOpenTable = %v, %v; want ErrSchemaMismatch", tbl, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// CreateOrOpenTable checks the key schema and families of a table with indexes too.
func TestCreateOrOpenIndexedRefusesChangedFamilies(t *testing.T) {
	ctx := t.Context()
	c := client.New(memory.New())
	defer c.Close()
	s := testkit.Salter(t, "hash:4")
	cfg := client.TableConfig{Salter: s, Families: []string{"d"}, Indexes: indextest.OrderIndexes(t)}
	if _, err := c.CreateOrOpenTable(ctx, "orders", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "orders", cfg); err != nil {
		t.Fatalf("reopened with the same declaration: %v", err)
	}
	cfg.Families = []string{"d", "zz"}
	_, err := c.CreateOrOpenTable(ctx, "orders", cfg)
	if !errors.Is(err, client.ErrSchemaMismatch) || !strings.Contains(err.Error(), "families [d zz] given, the table's are [d]") {
		t.Fatalf("reopened with another family: %v, want ErrSchemaMismatch naming the families", err)
	}
}
