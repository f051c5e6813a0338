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
	"github.com/brine-kv/brine/internal/testkit"
)

// TestReadmeGoExample keeps the README's Go example the runnable Example: the README shows it as a
// whole program whose main is the Example's body, verbatim (docs' TestCodeBlocks builds and runs it).
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
	want := "func main() {\n" + strings.TrimRight(body, "\n") + "\n}\n```\n"
	_, section, _ := strings.Cut(string(readme), "## Go example\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !strings.Contains(section, "```go\npackage main\n") || !strings.Contains(section, want) {
		t.Errorf("README's Go example differs from client.Example; its main should read:\n%s", want)
	}
}

func TestTables(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	for _, name := range []string{"b", "a", "c"} {
		if _, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4")}); err != nil {
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
	first, err := c.CreateOrOpenTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
	if err != nil {
		t.Fatalf("first CreateOrOpenTable: %v", err)
	}
	if err := first.Put(ctx, []byte("k"), testkit.Cell("q", "v")); err != nil {
		t.Fatal(err)
	}
	again, err := c.CreateOrOpenTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
	if err != nil {
		t.Fatalf("second CreateOrOpenTable: %v", err)
	}
	if row, err := again.Get(ctx, []byte("k")); err != nil || string(row.Cells[0].Value) != "v" {
		t.Fatalf("row through the reopened table = %+v, %v", row, err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")}); !errors.Is(err, client.ErrSpecMismatch) {
		t.Fatalf("CreateOrOpenTable with another spec: %v, want ErrSpecMismatch", err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "u", client.TableConfig{}); err == nil {
		t.Fatal("CreateOrOpenTable without a salter: no error")
	}
}

func TestVersionsAndTimeRange(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8"), MaxVersions: 3})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("k")
	for ts := int64(1); ts <= 4; ts++ {
		if err := tbl.Put(ctx, key, client.Cell{Family: "d", Qualifier: "q", Value: []byte{byte('0' + ts)}, Timestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	values := func(r client.Row) string {
		var s []byte
		for _, c := range r.Cells {
			s = append(s, c.Value...)
		}
		return string(s)
	}
	tests := []struct {
		name string
		opts []client.ReadOption
		want string
	}{
		{"newest", nil, "4"},
		{"all kept", []client.ReadOption{client.MaxVersions(10)}, "432"},
		{"time range", []client.ReadOption{client.MaxVersions(10), client.TimeRange(2, 4)}, "32"},
	}
	for _, tt := range tests {
		row, err := tbl.Get(ctx, key, tt.opts...)
		if err != nil || values(row) != tt.want {
			t.Errorf("%s: Get = %q, %v; want %q", tt.name, values(row), err, tt.want)
		}
		n := 0
		for row, err := range tbl.Scan(ctx, client.Range{}, tt.opts...) {
			if err != nil || values(row) != tt.want {
				t.Errorf("%s: Scan row = %q, %v; want %q", tt.name, values(row), err, tt.want)
			}
			n++
		}
		if n != 1 {
			t.Errorf("%s: Scan returned %d rows, want 1", tt.name, n)
		}
	}
	if _, err := tbl.Get(ctx, key, client.TimeRange(100, 0)); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("Get outside every version: %v, want ErrNotFound", err)
	}
}
