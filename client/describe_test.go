package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestDescribe: a table is described as it was created (families and their settings, key schema,
// salter, indexes, the user's Meta), a table created outside brine has no salter and no families,
// and a missing table is ErrTableNotFound.
func TestDescribe(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b)
	ix, err := client.ParseIndexConfig("by_v", "salt=hash:2|key=c:m:v")
	if err != nil {
		t.Fatal(err)
	}
	cache := false
	want := client.TableConfig{
		Salter: testkit.Salter(t, "hash:3"), Families: []string{"d", "m"}, MaxVersions: 2,
		FamilyOptions: map[string]client.FamilyOptions{"m": {MaxVersions: 5, TTL: time.Hour, BlockCache: &cache}},
		KeySchema:     testkit.Schema(t, "id:string,n:int64"), Meta: map[string]string{"owner": "team-a"},
		Indexes: []client.IndexConfig{ix},
	}
	if _, err := c.CreateTable(ctx, "t", want); err != nil {
		t.Fatal(err)
	}
	got, err := c.Describe(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case got.Salter.Spec() != "hash:3", got.KeySchema.String() != want.KeySchema.String(), got.MaxVersions != 2,
		len(got.Families) != 2 || got.Families[0] != "d" || got.Families[1] != "m",
		got.FamilyOptions["m"].MaxVersions != 5 || got.FamilyOptions["m"].TTL != time.Hour || *got.FamilyOptions["m"].BlockCache,
		len(got.Meta) != 1 || got.Meta["owner"] != "team-a",
		len(got.Indexes) != 1 || got.Indexes[0].Name != "by_v" || len(got.Indexes[0].Parts) != 1:
		t.Errorf("Describe = %+v\nwant %+v", got, want)
	}

	if err := b.CreateTable(ctx, "raw", backends.TableOptions{Families: []string{"d"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Describe(ctx, "raw"); err != nil || got.Salter != nil || got.Families != nil {
		t.Errorf("Describe of a table brine did not create = %+v, %v; want no salter, no families", got, err)
	}
	if _, err := c.Describe(ctx, "nope"); !errors.Is(err, client.ErrTableNotFound) {
		t.Errorf("Describe of a missing table: %v, want ErrTableNotFound", err)
	}
}
