package indexproto

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// A definition parses back from its meta spec, whatever its parts, with its entries' format; its
// declaration (Spec) has no format, and reads back as format 1's, which client upgrades.
func TestSpecRoundTrip(t *testing.T) {
	defs := []Def{
		{Name: "by_buyer", Salter: testkit.Salter(t, "hash:3"), Parts: []Part{{Column: backends.Column{Family: "d", Qualifier: "buyer"}}}},
		{Name: "by_buyer_v1", Salter: testkit.Salter(t, "hash:3"), KeyCell: true, Parts: []Part{{Column: backends.Column{Family: "d", Qualifier: "buyer"}}}},
		{Name: "by_seller", Salter: testkit.Salter(t, "hash:4:fields=1"), Unique: true, KeyCell: true,
			Parts:   []Part{{Column: backends.Column{Family: "d", Qualifier: "seller"}}, {Column: backends.Column{Family: "d", Qualifier: "ts"}, Desc: true}, {KeyField: 0}},
			Covered: []backends.Column{{Family: "d", Qualifier: "amount"}, {Family: "e", Qualifier: "x"}}},
	}
	for _, d := range defs {
		got, err := Parse(d.Name, d.MetaSpec())
		if err != nil {
			t.Fatalf("%s: %v", d.MetaSpec(), err)
		}
		if got.MetaSpec() != d.MetaSpec() || !reflect.DeepEqual(got.Parts, d.Parts) || !reflect.DeepEqual(got.Covered, d.Covered) ||
			got.Unique != d.Unique || got.KeyCell != d.KeyCell {
			t.Errorf("%s read back as %+v", d.MetaSpec(), got)
		}
		if strings.Contains(d.Spec(), "entries") || strings.Contains(d.MetaSpec(), entryFormat2) == d.KeyCell {
			t.Errorf("%+v: spec %q, meta spec %q", d, d.Spec(), d.MetaSpec())
		}
		if decl, err := Parse(d.Name, d.Spec()); err != nil || !decl.KeyCell {
			t.Errorf("declaration %q: KeyCell %v, %v", d.Spec(), decl.KeyCell, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, spec := range []string{"", "key=k0", "salt=none", "salt=none|key=", "salt=none|key=kx", "salt=none|key=c:d",
		"salt=none|key=k0|cover=d", "salt=none|key=k0|what", "salt=bogus|key=k0", "salt=none|key=c:d:_brine_v",
		"salt=none|key=k0|entries=3", "salt=none|key=k0|entries", "salt=none|key=k0|unique|entries=2"} {
		if _, err := Parse("ix", spec); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("%q: err %v, want ErrInvalidArgument", spec, err)
		}
	}
	if _, err := Parse("bad name", "salt=none|key=k0"); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("a bad name: err %v", err)
	}
}

func TestCheckAgainstTable(t *testing.T) {
	ks, err := keys.ParseSchema("id,n:int64")
	if err != nil {
		t.Fatal(err)
	}
	d := Def{Name: "ix", Parts: []Part{{KeyField: 2}}}
	if err := d.Check(nil, ks); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("key part past the schema: %v", err)
	}
	d = Def{Name: "ix", Parts: []Part{{Column: backends.Column{Family: "x", Qualifier: "q"}}}}
	if err := d.Check([]string{"d"}, nil); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("a family the table lacks: %v", err)
	}
	// A raw field runs to the end of a key: after it, a non-unique entry key could not end with
	// the main key, where its entries hold none.
	raw, err := keys.ParseSchema("id,tail:raw")
	if err != nil {
		t.Fatal(err)
	}
	d = Def{Name: "ix", Parts: []Part{{KeyField: 1}}}
	if err := d.Check(nil, raw); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("a raw key part: %v", err)
	}
	d.KeyCell = true
	if err := d.Check(nil, raw); err != nil {
		t.Errorf("a raw key part where entries hold their main key: %v", err)
	}
}

// Entry keys order as their values do, descending parts in reverse, and a non-unique key ends with
// the main key.
func TestEntryKey(t *testing.T) {
	col := backends.Column{Family: "d", Qualifier: "v"}
	asc := Def{Name: "a", Parts: []Part{{Column: col}}}
	desc := Def{Name: "d", Parts: []Part{{Column: col, Desc: true}}, Unique: true}
	key := func(d Def, v string) []byte {
		k, ok, err := d.EntryKey([]byte("m"), []backends.Cell{{Family: "d", Qualifier: "v", Value: []byte(v)}})
		if err != nil || !ok {
			t.Fatalf("%s %q: %v %v", d.Name, v, ok, err)
		}
		return k
	}
	if bytes.Compare(key(asc, "host1"), key(asc, "host12")) >= 0 || bytes.Compare(key(desc, "host1"), key(desc, "host12")) <= 0 {
		t.Error("parts do not order as their values")
	}
	if !bytes.HasSuffix(key(asc, "x"), []byte("m")) || bytes.HasSuffix(key(desc, "x"), []byte("m")) {
		t.Error("the main key ends a non-unique entry key only")
	}
	if _, ok, _ := asc.EntryKey([]byte("m"), []backends.Cell{{Family: "d", Qualifier: VersionQualifier, Value: []byte("t")}}); ok {
		t.Error("a row holding only its version has an entry")
	}
	if _, _, err := (Def{Name: "k", Parts: []Part{{KeyField: 3}}}).EntryKey([]byte("m"), []backends.Cell{{Family: "d", Qualifier: "v"}}); !errors.Is(err, backends.ErrInvalidKey) {
		t.Errorf("a key field the key lacks: %v", err)
	}
	rawKey := keys.AppendText(keys.AppendText(nil, keys.KindString, "a"), keys.KindRaw, "tail")
	if _, _, err := (Def{Name: "r", Parts: []Part{{KeyField: 1}}}).EntryKey(rawKey, []backends.Cell{{Family: "d", Qualifier: "v"}}); !errors.Is(err, backends.ErrInvalidKey) {
		t.Errorf("a raw key part without key cells: %v", err)
	}
}

// MainKey finds an entry's main key in its key cell where the entries hold one, else at the end of
// its key, whatever its parts; an entry with neither has none.
func TestMainKey(t *testing.T) {
	col := backends.Column{Family: "d", Qualifier: "v"}
	main := keys.AppendInt64(keys.AppendText(nil, keys.KindString, "s\x00\xff1"), -7)
	row := []backends.Cell{{Family: "d", Qualifier: "v", Value: []byte("\x00\xffhost\x00")}}
	for _, tc := range []struct {
		name string
		def  Def
	}{
		{"column", Def{Parts: []Part{{Column: col}}}},
		{"descending column", Def{Parts: []Part{{Column: col, Desc: true}}}},
		{"key fields and a column", Def{Parts: []Part{{KeyField: 1}, {Column: col, Desc: true}, {KeyField: 0}}}},
		{"key cell", Def{Parts: []Part{{Column: col}}, KeyCell: true}},
		{"unique", Def{Parts: []Part{{Column: col}}, Unique: true, KeyCell: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, ok, err := tc.def.EntryKey(main, row)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			cells := tc.def.EntryCells(main, []byte("v"), row)
			if got := tc.def.MainKey(key, cells); !bytes.Equal(got, main) {
				t.Errorf("main key %q, want %q", got, main)
			}
			hasCell := slices.ContainsFunc(cells, func(c backends.Cell) bool { return c.Qualifier == MainKeyQual })
			if hasCell != tc.def.KeyCell {
				t.Errorf("entry cells %+v: key cell %v, want %v", cells, hasCell, tc.def.KeyCell)
			}
			status := []backends.Cell{{Family: EntryFamily, Qualifier: StatusQual, Value: []byte("v")}}
			prefix, err := tc.def.Prefix([]byte("x"))
			if tc.def.Parts[0].Column.Family == "" {
				prefix, err = keys.AppendInt64(nil, -7), nil
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.def.MainKey(prefix, status); got != nil {
				t.Errorf("an entry of parts alone, no key cell: main key %q", got)
			}
		})
	}
}

// Any entry key and values give an entry key from which MainKey reads the main key back, and any
// bytes read as a main key or none: never a panic.
func FuzzMainKey(f *testing.F) {
	f.Add([]byte("host1"), []byte("o1"), false, false)
	f.Add([]byte{0, 0xff, 1}, []byte{0xff, 0}, true, true)
	col := backends.Column{Family: "d", Qualifier: "v"}
	f.Fuzz(func(t *testing.T, v, main []byte, desc, keyPart bool) {
		d := Def{Name: "f", Parts: []Part{{Column: col, Desc: desc}}}
		if keyPart {
			d.Parts = append(d.Parts, Part{KeyField: 0})
			main = keys.AppendText(nil, keys.KindBytes, main)
		}
		_ = d.MainKey(v, nil)
		if len(main) == 0 {
			return
		}
		key, ok, err := d.EntryKey(main, []backends.Cell{{Family: "d", Qualifier: "v", Value: v}})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		if got := d.MainKey(key, nil); !bytes.Equal(got, main) {
			t.Fatalf("main key %q, want %q", got, main)
		}
	})
}

func FuzzCovered(f *testing.F) {
	f.Add([]byte("12.5"), []byte{}, true, false)
	f.Add([]byte{}, []byte{0xff}, false, true)
	d := Def{Name: "c", Covered: []backends.Column{{Family: "d", Qualifier: "amount"}, {Family: "e", Qualifier: "note"}}}
	f.Fuzz(func(t *testing.T, a, b []byte, hasA, hasB bool) {
		var cells []backends.Cell
		if hasA {
			cells = append(cells, backends.Cell{Family: "d", Qualifier: "amount", Value: a})
		}
		if hasB {
			cells = append(cells, backends.Cell{Family: "e", Qualifier: "note", Value: b})
		}
		got, err := d.DecodeCovered(d.EncodeCovered(cells))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(cells) {
			t.Fatalf("%d cells back for %d", len(got), len(cells))
		}
		for i := range got {
			if got[i].Family != cells[i].Family || !bytes.Equal(got[i].Value, cells[i].Value) {
				t.Fatalf("cell %d: %+v, want %+v", i, got[i], cells[i])
			}
		}
		// Any bytes decode or fail: never a panic.
		_, _ = d.DecodeCovered(append(a, b...))
	})
}

func FuzzParse(f *testing.F) {
	f.Add("salt=hash:4|key=c:d:seller,c:d:ts:desc,k0|cover=d:amount|unique")
	f.Add("salt=none|key=k1")
	f.Add("salt=none|key=c:d:host|entries=2")
	f.Fuzz(func(t *testing.T, spec string) {
		d, err := Parse("ix", spec)
		if err != nil {
			return
		}
		back, err := Parse("ix", d.MetaSpec())
		if err != nil || back.MetaSpec() != d.MetaSpec() || back.KeyCell != d.KeyCell {
			t.Fatalf("%q parsed to %q, which reads back as %q (%v)", spec, d.MetaSpec(), back.MetaSpec(), err)
		}
	})
}

func TestFence(t *testing.T) {
	f := Fence{Token: "ab12", Expires: time.UnixMilli(time.Now().Add(time.Minute).UnixMilli()), Holder: "job_1"}
	got, ok := ParseFence(map[string]string{FenceKey: f.String()})
	if !ok || got != f || !got.Live() {
		t.Fatalf("%q read back as %+v, %v (live %v)", f.String(), got, ok, got.Live())
	}
	if _, ok := ParseFence(map[string]string{}); ok {
		t.Error("no fence recorded, one read")
	}
	if bad, ok := ParseFence(map[string]string{FenceKey: "tok notms"}); !ok || bad.Live() {
		t.Errorf("an unreadable expiry must read as expired: %+v", bad)
	}
}

func TestClaims(t *testing.T) {
	var cs Claims
	for range 2 { // a row may claim its own key again (a retried batch)
		if !cs.Claim("ix", []byte("k"), []byte("row1")) {
			t.Fatal("a row could not claim its own key")
		}
	}
	if cs.Claim("ix", []byte("k"), []byte("row2")) {
		t.Fatal("a second row claimed a held key")
	}
	if !cs.Claim("other", []byte("k"), []byte("row2")) {
		t.Fatal("another index's key was taken as held")
	}
	cs.Release("ix", []byte("k"), []byte("row2")) // not the holder: no effect
	if cs.Claim("ix", []byte("k"), []byte("row2")) {
		t.Fatal("a release by a row that did not hold the key freed it")
	}
	cs.Release("ix", []byte("k"), []byte("row1"))
	if !cs.Claim("ix", []byte("k"), []byte("row2")) {
		t.Fatal("a released key could not be claimed")
	}
}

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	if len(a) != 16 || bytes.Equal(a, b) {
		t.Fatalf("tokens %x and %x", a, b)
	}
	if age := TokenAge(a); age < 0 || age > time.Minute {
		t.Fatalf("a new token's age %v", age)
	}
	if TokenAge([]byte("short")) != 0 {
		t.Fatal("a malformed token has an age")
	}
	if !Marked(Status(VersionMark, a), time.Minute) || Marked(Status(StatusVerified, a), time.Minute) || Marked(Status(VersionMark, a), 0) {
		t.Fatal("Marked")
	}
}
