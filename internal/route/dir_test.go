package route

import (
	"reflect"
	"testing"

	"github.com/brine-kv/brine/backends"
)

// A directory row reads back as written, with the copied buckets of its own generation only.
func TestDirRoundTrip(t *testing.T) {
	cases := []Dir{
		{version: 1, phys: "orders", spec: "hash:8", done: map[int]bool{}},
		{version: 7, state: stateMigrate, phys: "orders", spec: "hash:8", target: "orders_r2", targetSpec: "hash:16",
			families: []string{"d", "e"}, maxVersions: 3, gen: 2, drop: "orders_r1", done: map[int]bool{0: true, 5: true}},
	}
	for _, want := range cases {
		cells := want.cells()
		for b := range want.done {
			cells = append(cells, backends.Cell{Family: dirFamily, Qualifier: doneQualifier(want.gen, b), Value: []byte{'1'}})
		}
		// A mark of an earlier generation is not this one's.
		cells = append(cells, backends.Cell{Family: dirFamily, Qualifier: doneQualifier(want.gen-1, 9), Value: []byte{'1'}})
		got, err := parseDirRow(cells)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
}

// The newest version of each column is the row's, as a read returns them newest first.
func TestDirNewestFirst(t *testing.T) {
	cells := append(Dir{version: 3, phys: "t", spec: "hash:4"}.cells(), Dir{version: 2, phys: "old", spec: "hash:2"}.cells()...)
	got, err := parseDirRow(cells)
	if err != nil {
		t.Fatal(err)
	}
	if got.version != 3 || got.phys != "t" || got.spec != "hash:4" {
		t.Fatalf("got %+v, want version 3 of t", got)
	}
}

func TestDirMalformed(t *testing.T) {
	good := Dir{version: 1, phys: "t", spec: "none"}.cells()
	set := func(q, v string) []backends.Cell {
		out := []backends.Cell{{Family: dirFamily, Qualifier: q, Value: []byte(v)}}
		return append(out, good...) // the bad value comes first: it is the newest
	}
	for _, cells := range [][]backends.Cell{nil, set("v", "x"), set("gen", ""), set("maxv", "1.5")} {
		if _, err := parseDirRow(cells); err == nil {
			t.Errorf("%v: parsed", cells)
		}
	}
}

func FuzzParseDir(f *testing.F) {
	f.Add("1", "migrate", "2", "3", "b2_4")
	f.Add("x", "", "", "", "")
	f.Fuzz(func(t *testing.T, v, state, gen, maxv, mark string) {
		cells := []backends.Cell{
			{Family: dirFamily, Qualifier: "v", Value: []byte(v)},
			{Family: dirFamily, Qualifier: "state", Value: []byte(state)},
			{Family: dirFamily, Qualifier: "gen", Value: []byte(gen)},
			{Family: dirFamily, Qualifier: "maxv", Value: []byte(maxv)},
			{Family: dirFamily, Qualifier: mark, Value: []byte{'1'}},
		}
		r, err := parseDirRow(cells)
		if err != nil {
			return
		}
		// What parses writes back to the same row.
		back, err := parseDirRow(append(r.cells(), cells...))
		if err != nil {
			t.Fatalf("%+v written back: %v", r, err)
		}
		if back.version != r.version || back.gen != r.gen || back.maxVersions != r.maxVersions || back.state != r.state {
			t.Fatalf("%+v read back as %+v", r, back)
		}
	})
}
