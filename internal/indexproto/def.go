package indexproto

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The index table's columns. The index table holds, per entry, its status and the covered columns
// in one cell each, so that one put replaces all of them, and, where its key does not end with it
// (Def.KeyCell), the main row's key.
const (
	EntryFamily    = "ix" // the index table's only family
	StatusQual     = "s"  // "v" verified, or "u" + the writer's token
	MainKeyQual    = "k"  // the main row's logical key, where Def.KeyCell
	CoveredQual    = "c"  // the covered columns, encoded by EncodeCovered
	StatusVerified = 'v'  // + the token of the write or repair that verified it
	StatusPending  = 'u'  // + the token of the write that left it pending
)

// Part is client.IndexPart: one field of an index key.
type Part struct {
	KeyField int
	Column   backends.Column
	Desc     bool
}

// Def is client.IndexConfig: one index's definition, and the encodings that follow from it (its
// spec in the table's meta, its entries' keys and cells).
type Def struct {
	Name    string
	Parts   []Part
	Salter  salting.Salter
	Covered []backends.Column
	Unique  bool
	// KeyCell: the entries hold the main row's key in a cell (MainKeyQual). A unique index's must,
	// since its entry key is the index key alone. A non-unique entry's key ends with the main key, so
	// its entries hold none, unless the index was created before entry format 2 (its spec in the
	// table's meta has no "entries=2"). That cell was a fifth of the region server's CPU in an
	// exclusive import: HBase stores the whole, long, entry key with every cell.
	KeyCell bool
}

// entryFormat2 is the spec item of a non-unique index whose entries hold no key cell. A brine that
// predates it refuses the item, and so the table, rather than skip entries it cannot read.
const entryFormat2 = "entries=2"

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func validColumnName(c backends.Column) bool {
	return c.Family != "" && c.Qualifier != "" && !strings.ContainsAny(c.Family+c.Qualifier, ":,|")
}

// Check refuses a definition the store could not keep or brine could not parse back: families,
// when not nil, are the table's, and ks, when not nil, the table's key schema, whose fields a key
// part must name.
func (d Def) Check(families []string, ks *keys.Schema) error {
	if !validName(d.Name) {
		return fmt.Errorf("%w: index name %q: want 1-64 letters, digits or '_'", backends.ErrInvalidArgument, d.Name)
	}
	if len(d.Parts) == 0 {
		return fmt.Errorf("%w: index %q has no parts", backends.ErrInvalidArgument, d.Name)
	}
	for _, p := range d.Parts {
		switch {
		case p.Column.Family == "" && (p.KeyField < 0 || p.KeyField > 255):
			return fmt.Errorf("%w: index %q: key field %d", backends.ErrInvalidArgument, d.Name, p.KeyField)
		case p.Column.Family == "" && p.Desc:
			return fmt.Errorf("%w: index %q: a key field keeps its own order; Desc is for column parts", backends.ErrInvalidArgument, d.Name)
		case p.Column.Family == "" && ks != nil && p.KeyField >= ks.Len():
			return fmt.Errorf("%w: index %q: key part k%d: the table's key schema %q has %d fields (k0 to k%d)",
				backends.ErrInvalidArgument, d.Name, p.KeyField, ks, ks.Len(), ks.Len()-1)
		case p.Column.Family == "" && ks != nil && !d.KeyCell && ks.Fields()[p.KeyField].Kind == keys.KindRaw:
			return fmt.Errorf("%w: index %q: key part k%d is a raw field, which runs to the end of a key: a non-unique index's entry key ends with the main key after its parts",
				backends.ErrInvalidArgument, d.Name, p.KeyField)
		}
	}
	for _, c := range d.Columns() {
		if !validColumnName(c) {
			return fmt.Errorf("%w: index %q: column %q:%q (want a family and a qualifier without ':', ',' or '|')", backends.ErrInvalidArgument, d.Name, c.Family, c.Qualifier)
		}
		if families != nil && !slices.Contains(families, c.Family) {
			return fmt.Errorf("%w: index %q: family %q is not one of the table's %v", backends.ErrInvalidArgument, d.Name, c.Family, families)
		}
		if c.Qualifier == VersionQualifier {
			return fmt.Errorf("%w: index %q: column %q is brine's", backends.ErrInvalidArgument, d.Name, VersionQualifier)
		}
	}
	return nil
}

// Columns are the main table's columns the index reads: its covered columns and column parts.
func (d Def) Columns() []backends.Column {
	cols := slices.Clone(d.Covered)
	for _, p := range d.Parts {
		if p.Column.Family != "" {
			cols = append(cols, p.Column)
		}
	}
	return cols
}

// Spec is the definition as stored in table meta: "salt=<spec>|key=k0,c:f:q,c:f:q:desc|cover=f:q|unique".
func (d Def) Spec() string {
	salt := "none"
	if d.Salter != nil {
		salt = d.Salter.Spec()
	}
	parts := make([]string, len(d.Parts))
	for i, p := range d.Parts {
		switch {
		case p.Column.Family == "":
			parts[i] = "k" + strconv.Itoa(p.KeyField)
		case p.Desc:
			parts[i] = "c:" + p.Column.Family + ":" + p.Column.Qualifier + ":desc"
		default:
			parts[i] = "c:" + p.Column.Family + ":" + p.Column.Qualifier
		}
	}
	s := "salt=" + salt + "|key=" + strings.Join(parts, ",")
	if len(d.Covered) > 0 {
		cov := make([]string, len(d.Covered))
		for i, c := range d.Covered {
			cov[i] = c.Family + ":" + c.Qualifier
		}
		s += "|cover=" + strings.Join(cov, ",")
	}
	if d.Unique {
		s += "|unique"
	}
	return s
}

// MetaSpec is Spec as the table's meta stores it: with the entry format of a non-unique index
// without key cells, which a declaration leaves out (a new index always gets the newest format).
func (d Def) MetaSpec() string {
	if d.KeyCell || d.Unique {
		return d.Spec()
	}
	return d.Spec() + "|" + entryFormat2
}

// badPart says what an index key part must look like.
func badPart(p string) string {
	return fmt.Sprintf("key part %q: want kN (the main key's part N) or c:FAMILY:QUALIFIER[:desc] (a column)", p)
}

// Parse reads a definition in MetaSpec's form as a user declares it (client.ParseIndexConfig): its
// salt spec goes to salting.ParseSpec. A non-unique one without "entries=2" has KeyCell set: it was
// stored before that format, or declared by a user, whose caller (client) gives a new index the
// newest format.
func Parse(name, s string) (Def, error) { return parse(name, s, salting.ParseSpec) }

// ParseStored is Parse for a definition read from a table's meta: its salt spec goes to
// salting.ParseStoredSpec, which reads the spellings earlier brines stored with their meaning.
func ParseStored(name, s string) (Def, error) { return parse(name, s, salting.ParseStoredSpec) }

func parse(name, s string, parseSalt func(string) (salting.Salter, error)) (Def, error) {
	d := Def{Name: name}
	format2 := false
	bad := func(why string) (Def, error) {
		return Def{}, fmt.Errorf("%w: index %q spec %q: %s", backends.ErrInvalidArgument, name, s, why)
	}
	for item := range strings.SplitSeq(s, "|") {
		k, v, _ := strings.Cut(item, "=")
		switch k {
		case "salt":
			sl, err := parseSalt(v)
			if err != nil {
				return bad(err.Error())
			}
			d.Salter = sl
		case "key":
			for p := range strings.SplitSeq(v, ",") {
				f := strings.Split(p, ":")
				switch {
				case len(f) == 1 && strings.HasPrefix(p, "k"):
					n, err := strconv.Atoi(p[1:])
					if err != nil {
						return bad(badPart(p))
					}
					d.Parts = append(d.Parts, Part{KeyField: n})
				case (len(f) == 3 || len(f) == 4 && f[3] == "desc") && f[0] == "c":
					d.Parts = append(d.Parts, Part{Column: backends.Column{Family: f[1], Qualifier: f[2]}, Desc: len(f) == 4})
				default:
					return bad(badPart(p))
				}
			}
		case "cover":
			for c := range strings.SplitSeq(v, ",") {
				fam, q, ok := strings.Cut(c, ":")
				if !ok {
					return bad(fmt.Sprintf("covered column %q: want FAMILY:QUALIFIER", c))
				}
				d.Covered = append(d.Covered, backends.Column{Family: fam, Qualifier: q})
			}
		case "unique":
			d.Unique = true
		case "entries":
			if item != entryFormat2 {
				return bad(fmt.Sprintf("entry format %q: this brine reads formats 1 and 2; a newer one created the index", v))
			}
			format2 = true
		default:
			return bad(fmt.Sprintf("item %q: want salt=SPEC, key=PARTS, cover=COLUMNS, unique or %s", item, entryFormat2))
		}
	}
	if d.Salter == nil {
		return bad("no salt")
	}
	if format2 && d.Unique {
		return bad("a unique index's entries hold their main key in a cell: it has no " + entryFormat2)
	}
	d.KeyCell = d.Unique || !format2
	if err := d.Check(nil, nil); err != nil {
		return Def{}, err
	}
	return d, nil
}
