package route

import (
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/keys"
)

func TestResume(t *testing.T) {
	cases := []struct {
		name       string
		rc         ReadConfig
		r          backends.Range
		start, end string
	}{
		{"no cursor", ReadConfig{}, backends.Range{Start: []byte("a"), End: []byte("z")}, "a", "z"},
		{"ascending", ReadConfig{After: []byte("m")}, backends.Range{Start: []byte("a"), End: []byte("z")}, "m\x00", "z"},
		{"ascending, cursor before the range", ReadConfig{After: []byte("0")}, backends.Range{Start: []byte("a"), End: []byte("z")}, "a", "z"},
		{"descending", ReadConfig{After: []byte("m"), Reverse: true}, backends.Range{Start: []byte("a"), End: []byte("z")}, "a", "m"},
		{"descending, unbounded", ReadConfig{After: []byte("m"), Reverse: true}, backends.Range{}, "", "m"},
		{"descending past the empty key", ReadConfig{After: []byte{}, Reverse: true}, backends.Range{}, "\x00", "\x00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rc.Resume(tc.r)
			if string(got.Start) != tc.start || string(got.End) != tc.end {
				t.Fatalf("got [%q, %q), want [%q, %q)", got.Start, got.End, tc.start, tc.end)
			}
		})
	}
}

// withColumns never writes into the caller's slice: a rebucket's read adds the marker column to a
// copy of the options a caller may reuse.
func TestWithColumnsCopies(t *testing.T) {
	cols := make([]backends.Column, 1, 4)
	cols[0] = backends.Column{Family: "d"}
	rc := ReadConfig{Read: backends.ReadOptions{Columns: cols}}
	a := rc.withColumns(backends.Column{Family: "a"})
	b := rc.withColumns(backends.Column{Family: "b"})
	if len(rc.Read.Columns) != 1 || a.Read.Columns[1].Family != "a" || b.Read.Columns[1].Family != "b" {
		t.Fatalf("caller %v, a %v, b %v", rc.Read.Columns, a.Read.Columns, b.Read.Columns)
	}
}

// PrintedKeys binds a key regex to the schema's printed form, and leaves a config without one as it is.
func TestPrintedKeys(t *testing.T) {
	ks, err := keys.ParseSchema("id,n:int64")
	if err != nil {
		t.Fatal(err)
	}
	key, err := ks.Encode("O1", int64(42))
	if err != nil {
		t.Fatal(err)
	}
	f := backends.KeyRegexFilter("^O1,42$")
	rc := ReadConfig{Read: backends.ReadOptions{Filter: &f}}.PrintedKeys(ks)
	cells := []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("v")}}
	if got := driverkit.ApplyRow(rc.Read.Filter, key, cells); len(got) != 1 {
		t.Fatalf("bound filter dropped the key it prints as O1,42")
	}
	if got := driverkit.ApplyRow(&f, key, cells); len(got) != 0 {
		t.Fatalf("the caller's filter was bound in place: it matches the encoded key")
	}
	if none := (ReadConfig{Limit: 3}).PrintedKeys(ks); none.Limit != 3 || none.Read.Filter != nil {
		t.Fatalf("a config without a key filter changed: %+v", none)
	}
}

func TestCheckRange(t *testing.T) {
	cases := []struct {
		start, end string
		bad        bool
	}{{"a", "b", false}, {"a", "a", false}, {"a", "", false}, {"b", "a", true}}
	for _, tc := range cases {
		err := CheckRange("scan t", backends.Range{Start: []byte(tc.start), End: []byte(tc.end)}, KeyText)
		if (err != nil) != tc.bad {
			t.Errorf("[%q, %q): err %v, want bad %v", tc.start, tc.end, err, tc.bad)
		}
	}
}
