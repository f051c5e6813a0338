// Package indexproto holds what the index protocol (client.Table) stores: the names of its
// meta keys and columns, an index definition's spec (Def), its entries' keys and cells (entry.go),
// the writes' tokens and the exclusive fence's record (records.go, fence.go). client runs the
// protocol over them; the drop-ins, which may not import client, use the names to recognise a table
// with indexes, since every write to one goes through the protocol and its reads hide the version
// column. None of it is part of the driver contract (package backends): a driver stores a table's
// meta and cells without knowing what they mean.
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
	// StatePrefix + an index's name is the meta key holding the state of an index that is not
	// active; an index without it (every index a table was created with) is active.
	StatePrefix = "brine.indexstate."
	// VersionQualifier is the column, in the MetaFamily family, where a table with indexes keeps the
	// token of the row's last write.
	VersionQualifier = "_brine_v"
)

// ErrIndexedTable: a write to a table with indexes around the index protocol (a drop-in's) was
// refused; only client.Table writes such tables. Nothing was sent. The drop-ins re-export it.
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

// Meta is the part of a table's meta that says which indexes it has and in which state: what a
// copy of the table's definitions carries.
func Meta(meta map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range meta {
		if strings.HasPrefix(k, MetaPrefix) || strings.HasPrefix(k, StatePrefix) || k == MetaFamily || k == FenceKey || k == FenceIndexesKey {
			out[k] = v
		}
	}
	return out
}
