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

// CreateTable refuses bad family settings before the store sees the table, whatever the store (the
// memory store has no families and would ignore them).
func TestCreateTableChecksFamilyOptions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		cfg  client.TableConfig
		ok   bool
	}{
		{"settings of the default family", client.TableConfig{FamilyOptions: map[string]client.FamilyOptions{client.DefaultFamily: {MaxVersions: 3}}}, true},
		{"settings of no family", client.TableConfig{FamilyOptions: map[string]client.FamilyOptions{"x": {MaxVersions: 3}}}, false},
		{"sub-second TTL", client.TableConfig{Families: []string{"a"}, FamilyOptions: map[string]client.FamilyOptions{"a": {TTL: time.Millisecond}}}, false},
		{"unknown codec", client.TableConfig{Families: []string{"a"}, FamilyOptions: map[string]client.FamilyOptions{"a": {Compression: "rar"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := client.New(memory.New())
			defer c.Close()
			tc.cfg.Salter = testkit.Salter(t, "hash:4")
			_, err := c.CreateTable(ctx, "t", tc.cfg)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, backends.ErrInvalidArgument) {
				t.Fatalf("CreateTable: %v, want ErrInvalidArgument", err)
			}
			if _, err := c.OpenTable(ctx, "t", nil); !errors.Is(err, backends.ErrTableNotFound) {
				t.Fatalf("after the refusal the table exists, or: %v", err)
			}
		})
	}
}
