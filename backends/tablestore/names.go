package tablestore

import (
	"fmt"
	"strings"

	"github.com/brine-kv/brine/backends"
)

// Service limits (Tablestore documentation); the SDK checks almost none of them, so brine does, before
// anything is sent.
const (
	maxNameLen       = 255          // table and column names
	maxCreateNameLen = 100          // table names accepted by the SDK's CreateTable
	maxPKValueLen    = 1024         // one STRING/BINARY primary-key value
	maxValueLen      = 2 << 20      // one STRING/BINARY attribute value
	maxRowSize       = 4 << 20      // one row: primary key, names and values
	maxBatchBytes    = 4 << 20      // one BatchWriteRow request
	maxBatchWrite    = 200          // rows per BatchWriteRow
	maxBatchGet      = 100          // rows per BatchGetRow
	maxColumnsToGet  = 128          // columns_to_get entries
	maxPKColumns     = 4            // primary-key columns per table
	familySep        = "__"         // between family and qualifier in a column name
	cellOverhead     = 16           // per-cell PlainBuffer framing, for batch sizing only
	rowOverhead      = 64           // per-row framing and condition, for batch sizing only
	pageRowsCap      = 5000         // the service never returns more rows per GetRange page
	defaultMetaTable = "brine_meta" // where TableOptions.Meta lives
	metaKeyColumn    = "table"      // primary key of the meta table
	metaMapColumn    = "meta"       // JSON of TableOptions.Meta
	metaSplitsColumn = "split_keys" // JSON of TableOptions.SplitKeys (recorded, not applied)
	metaFamilies     = "families"   // JSON of TableOptions.Families; absent: the table takes any family
	defaultKeyColumn = "pk"         // the single BINARY primary-key column of a brine table
)

// validName reports whether s is a valid Tablestore table or column name: 1-255 bytes of
// [A-Za-z0-9_], starting with a letter or '_'.
func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func checkTableName(table string) error {
	if !validName(table) {
		return fmt.Errorf("tablestore: table name %q: %w: want 1-%d bytes of [A-Za-z0-9_] starting with a letter or '_'",
			table, backends.ErrInvalidArgument, maxNameLen)
	}
	return nil
}

// ColumnName returns the Tablestore attribute column that holds (family, qualifier).
//
// The mapping is reversible: family "" maps to the qualifier itself, any other family to
// family + "__" + qualifier. So that a name splits back in exactly one way, neither part may contain
// "__" and a family may not end with '_' ("a_"+"__"+"b" would read back as "a" and "_b"). The result
// must be a valid column name (1-255 bytes of [A-Za-z0-9_], first a letter or '_'). Anything else fails
// with an error wrapping backends.ErrInvalidArgument.
func ColumnName(family, qualifier string) (string, error) {
	if strings.Contains(family, familySep) || strings.Contains(qualifier, familySep) {
		return "", fmt.Errorf("tablestore: column %q:%q: %w: family and qualifier may not contain %q",
			family, qualifier, backends.ErrInvalidArgument, familySep)
	}
	name := qualifier
	if family != "" {
		if strings.HasSuffix(family, "_") {
			return "", fmt.Errorf("tablestore: column %q:%q: %w: family may not end with '_'",
				family, qualifier, backends.ErrInvalidArgument)
		}
		name = family + familySep + qualifier
	}
	if !validName(name) {
		return "", fmt.Errorf("tablestore: column %q:%q: %w: %q is not a Tablestore column name",
			family, qualifier, backends.ErrInvalidArgument, name)
	}
	return name, nil
}

// SplitColumnName is the inverse of ColumnName: the family is what precedes the first "__" (none: "").
func SplitColumnName(name string) (family, qualifier string) {
	if i := strings.Index(name, familySep); i >= 0 {
		return name[:i], name[i+len(familySep):]
	}
	return "", name
}
