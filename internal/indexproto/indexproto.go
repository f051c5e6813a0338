// Package indexproto holds the names of the index protocol (client.IndexedTable) that packages below
// client must know too: the drop-ins, which may not import client, have to recognise a table with
// indexes, since every write to one goes through the protocol and its reads hide the version column.
// They are not part of the driver contract (package backends): a driver stores a table's meta and
// cells without knowing what they mean.
package indexproto

import (
	"errors"
	"strings"
)

// The table meta keys and the column of a table with indexes.
const (
	// MetaPrefix + an index's name is the meta key holding that index's definition.
	MetaPrefix = "brine.index."
	// MetaFamily is the meta key naming the family that holds the version column.
	MetaFamily = "brine.indexfamily"
	// VersionQualifier is the column, in the MetaFamily family, where a table with indexes keeps the
	// token of the row's last write.
	VersionQualifier = "_brine_v"
)

// ErrIndexedTable: a handle that would write a table with indexes around the index protocol (a plain
// client.Table, a drop-in's write) was refused; only client.IndexedTable writes such tables. Nothing
// was sent. Package client and the drop-ins re-export it.
var ErrIndexedTable = errors.New("brine: the table has indexes")

// Indexed reports whether table meta declares indexes, and the family of its version column.
func Indexed(meta map[string]string) (family string, indexed bool) {
	for k := range meta {
		if strings.HasPrefix(k, MetaPrefix) {
			return meta[MetaFamily], true
		}
	}
	return "", false
}
