package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestExportRowsRefuses: a row the import formats cannot carry so that import reads it back equal
// fails the export (which then drops nothing), naming the format that can carry it.
func TestExportRowsRefuses(t *testing.T) {
	schema := testkit.Schema(t, "host,ts:int64")
	key, _ := schema.Encode("h1", int64(5))
	cell := func(fam, qual, val string, ts int64) client.Cell {
		return client.Cell{Family: fam, Qualifier: qual, Value: []byte(val), Timestamp: ts}
	}
	for _, tc := range []struct {
		name   string
		format string
		rows   [][]client.Cell
		want   string // the error's start; "" for none
		out    string
	}{
		{"one row", "jsonl", [][]client.Cell{{cell("d", "a", "x", 7), cell("d", "b", "y", 7)}}, "", `{"_ts":"7","a":"x","b":"y","host":"h1","ts":"5"}` + "\n"},
		{"csv", "csv", [][]client.Cell{{cell("d", "a", "x", 7)}, {cell("d", "a", "z", 8)}}, "", "_ts,a,host,ts\n7,x,h1,5\n8,z,h1,5\n"},
		{"two families", "jsonl", [][]client.Cell{{cell("d", "a", "x", 7), cell("e", "b", "y", 7)}}, "cells in families d and e", ""},
		{"two timestamps", "jsonl", [][]client.Cell{{cell("d", "a", "x", 7), cell("d", "b", "y", 8)}}, "cells with different timestamps", ""},
		{"a key field's name", "jsonl", [][]client.Cell{{cell("d", "host", "x", 7)}}, `qualifier "host" is also a key field`, ""},
		{"binary", "jsonl", [][]client.Cell{{cell("d", "a", "\xff", 7)}}, "d:a is not UTF-8 text", ""},
		{"csv columns differ", "csv", [][]client.Cell{{cell("d", "a", "x", 7)}, {cell("d", "b", "y", 7)}}, "columns [_ts b host ts]", ""},
	} {
		var b bytes.Buffer
		put := rowsWriter(&b, tc.format, keyFormat{schema: schema})
		var err error
		for _, cells := range tc.rows {
			if err = put(client.Row{Key: key, Cells: cells}); err != nil {
				break
			}
		}
		if err == nil {
			err = put(client.Row{})
		}
		switch {
		case tc.want == "" && (err != nil || b.String() != tc.out):
			t.Errorf("%s: %q, %v; want %q", tc.name, b.String(), err, tc.out)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "use --format")):
			t.Errorf("%s: error %v, want one starting %q and naming the format to use", tc.name, err, tc.want)
		}
	}
}
