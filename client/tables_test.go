package client_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
)

// TestReadmeGoExample keeps the README's Go example the runnable Example, verbatim (one tab less).
func TestReadmeGoExample(t *testing.T) {
	ex, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(ex), "func Example() {\n")
	body, _, ok2 := strings.Cut(body, "\t// Output:")
	if !ok || !ok2 {
		t.Fatal("example_test.go has no Example with an Output comment")
	}
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t")
	}
	want := "```go\n" + strings.Join(lines, "\n") + "\n```\n"
	_, section, _ := strings.Cut(string(readme), "## Go example\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, want) {
		t.Errorf("README's Go example differs from client.Example; it should read:\n%s", want)
	}
}

func TestTables(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	for _, name := range []string{"b", "a", "c"} {
		if _, err := c.CreateTable(ctx, name, client.TableConfig{Salter: mustSalter(t, "hash:4")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteTable(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	names, err := c.Tables(ctx)
	if err != nil || !slices.Equal(names, []string{"a", "b"}) {
		t.Fatalf("Tables = %q, %v; want [a b]", names, err)
	}
}

func TestCreateOrOpenTable(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	first, err := c.CreateOrOpenTable(ctx, "t", client.TableConfig{Salter: mustSalter(t, "hash:8")})
	if err != nil {
		t.Fatalf("first CreateOrOpenTable: %v", err)
	}
	if err := first.Put(ctx, []byte("k"), cell("v")); err != nil {
		t.Fatal(err)
	}
	again, err := c.CreateOrOpenTable(ctx, "t", client.TableConfig{Salter: mustSalter(t, "hash:8")})
	if err != nil {
		t.Fatalf("second CreateOrOpenTable: %v", err)
	}
	if row, err := again.Get(ctx, []byte("k")); err != nil || string(row.Cells[0].Value) != "v" {
		t.Fatalf("row through the reopened table = %+v, %v", row, err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "t", client.TableConfig{Salter: mustSalter(t, "hash:4")}); !errors.Is(err, client.ErrSpecMismatch) {
		t.Fatalf("CreateOrOpenTable with another spec: %v, want ErrSpecMismatch", err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "u", client.TableConfig{}); err == nil {
		t.Fatal("CreateOrOpenTable without a salter: no error")
	}
}
