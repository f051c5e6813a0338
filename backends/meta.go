package backends

import "strings"

// Table meta keys and the column of tables with indexes (client.IndexedTable). They live here, below
// client, because the drop-ins, which must not import client, have to recognise such tables: every
// write to one goes through the index protocol, and its reads hide the version column.
const (
	// MetaIndexPrefix + an index's name is the meta key holding that index's definition.
	MetaIndexPrefix = "brine.index."
	// MetaIndexFamily is the meta key naming the family that holds the version column.
	MetaIndexFamily = "brine.indexfamily"
	// IndexVersionQualifier is the column, in the MetaIndexFamily family, where a table with indexes
	// keeps the token of the row's last write.
	IndexVersionQualifier = "_brine_v"
)

// IndexedMeta reports whether table meta declares indexes, and the family of its version column.
func IndexedMeta(meta map[string]string) (family string, indexed bool) {
	for k := range meta {
		if strings.HasPrefix(k, MetaIndexPrefix) {
			return meta[MetaIndexFamily], true
		}
	}
	return "", false
}
