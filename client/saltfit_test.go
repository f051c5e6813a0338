package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// TestCreateTableSaltFitsKey: the Go API refuses a salter that cannot place the keys of the table's
// key schema (whether given as KeySchema or in Meta), plain or indexed, and rebuckets to one, before
// anything is made.
func TestCreateTableSaltFitsKey(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	ks := testkit.Schema(t, "id:int64")
	spec := func(s string) salting.Salter {
		sl, err := salting.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		return sl
	}
	for _, tc := range []struct {
		name string
		cfg  client.TableConfig
	}{
		{"KeySchema", client.TableConfig{Salter: spec("mod:8:field=k1"), KeySchema: ks}},
		{"Meta", client.TableConfig{Salter: spec("hash:16:fields=3"), Meta: map[string]string{client.MetaKeySchema: "id:int64"}}},
		{"offset", client.TableConfig{Salter: spec("mod:8:offset=100,width=8"), KeySchema: ks}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateTable(ctx, "t", tc.cfg)
			if !errors.Is(err, salting.ErrSchemaMismatch) || !errors.Is(err, client.ErrInvalidArgument) {
				t.Fatalf("CreateTable: %v, want ErrSchemaMismatch", err)
			}
			if _, err := c.Describe(ctx, "t"); !errors.Is(err, client.ErrTableNotFound) {
				t.Fatalf("after the refusal: %v, want no table", err)
			}
		})
	}
	tb, err := c.CreateTable(ctx, "src", client.TableConfig{Salter: spec("hash:4"), KeySchema: ks})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"mod:8:field=k1", "reverse"} {
		if err := tb.Rebucket(ctx, spec(s), client.RebucketOptions{}); !errors.Is(err, client.ErrInvalidArgument) {
			t.Errorf("Rebucket to %s: %v, want a refusal", s, err)
		}
		if st, err := c.RebucketStatus(ctx, "src"); err != nil || st.State != "" || st.Target != "" {
			t.Errorf("after the refused rebucket to %s: %+v, %v: want none under way", s, st, err)
		}
	}
}
