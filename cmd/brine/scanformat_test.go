package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCLIScanFormatsRoundTrip: scan --format jsonl and csv print rows as import reads them, so a scan
// imports back into another table (another salting too) equal to the source: the same keys, columns,
// values and cell timestamps, compared as scan --format cells prints every cell.
func TestCLIScanFormatsRoundTrip(t *testing.T) {
	t.Run("local", func(t *testing.T) { checkCLIScanFormats(t, newCLI(t)) })
	t.Run("tablestore", func(t *testing.T) {
		c := newCLI(t)
		c.useTablestore(t)
		checkCLIScanFormats(t, c)
	})
}

func checkCLIScanFormats(t *testing.T, c *cli) {
	src := c.tab("src")
	in := c.file("in.csv", "host,ts,cpu,note\nh1,100,0.5,plain\nh2,200,1.5,\"a, quoted \"\"value\"\"\"\nh1,300,2,\n")
	c.ok("import", "--store", c.store, "--table", src, "--create", "--salt", "hash:4", "--key", typedKey, in)
	cells := func(table string) []string {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(c.ok("scan", "--store", c.store, "--table", table, "--format", "cells")), "\n")
		for _, l := range lines { // each a row: its printed and logical key, every cell with its timestamp
			var row struct {
				Cells []json.RawMessage `json:"cells"`
			}
			if err := json.Unmarshal([]byte(l), &row); err != nil || len(row.Cells) == 0 {
				t.Fatalf("scan --format cells line %q: %v", l, err)
			}
		}
		return lines
	}
	want := cells(src)
	if len(want) != 3 {
		t.Fatalf("source holds %d rows, want 3", len(want))
	}
	for _, format := range []string{"jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			out := c.ok("scan", "--store", c.store, "--table", src, "--format", format)
			file := c.file("out."+format, out)
			dst := c.tab("dst_" + format)
			c.ok("import", "--store", c.store, "--table", dst, "--create", "--salt", "hash:8", "--key", typedKey, "--ts-column", "_ts", file)
			if got := cells(dst); !slices.Equal(got, want) {
				t.Fatalf("%s round trip:\n got %q\nwant %q", format, got, want)
			}
			one := c.ok("get", "--store", c.store, "--table", dst, "--format", format, "h2,200")
			if format == "jsonl" {
				var row map[string]string
				if err := json.Unmarshal([]byte(one), &row); err != nil || row["note"] != `a, quoted "value"` || row["ts"] != "200" || row["_ts"] == "" {
					t.Fatalf("get --format jsonl: %q (%v)", one, err)
				}
			}
		})
	}
}
