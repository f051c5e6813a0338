package hbase

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
)

// HBase has no compare-and-set on a table descriptor (ModifyTable replaces it whole, and two
// concurrent ones both succeed), so a table's Meta is rewritten elsewhere: in its row of MetaTable,
// one CheckAndMutate, which the region server applies under the row's lock. The descriptor keeps the
// Meta given at creation, which never changes, and an id drawn at creation; the row holds the id and
// the current Meta. A rewrite reads the row, compares the Meta in force with the caller's old one, and
// writes the new one on condition that the row still holds the exact bytes it read (or is still
// absent), so comparison and write are one atomic step, and of two rewriters from one old Meta exactly
// one wins. A row whose id is not the descriptor's was left by a deleted table of the same name and
// is ignored.

// MetaTable is the store table where the driver keeps the Meta of tables rewritten since creation
// (RewriteTableMeta). Tables does not list it.
const MetaTable = "brine_meta"

const (
	metaFamily    = "m"
	metaQualifier = "v"
	metaIDAttr    = "brine.hbase.meta-id" // descriptor attribute: the table's id, for its MetaTable row
)

// newMetaID is the descriptor attribute naming a new table's row of MetaTable.
func newMetaID() *pb.BytesBytesPair {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return &pb.BytesBytesPair{First: []byte(metaIDAttr), Second: []byte(hex.EncodeToString(id[:]))}
}

func metaID(s *pb.TableSchema) string {
	for _, a := range s.GetAttributes() {
		if string(a.GetFirst()) == metaIDAttr {
			return string(a.GetSecond())
		}
	}
	return ""
}

// currentMeta returns the Meta in force for the table described by s, and the raw bytes of its
// MetaTable row (nil when it has none), which a rewrite's condition names.
func (b *Backend) currentMeta(ctx context.Context, table string, s *pb.TableSchema) (map[string]string, []byte, error) {
	rows, err := b.Read(ctx, MetaTable, [][]byte{[]byte(table)}, backends.ReadOptions{})
	if errors.Is(err, backends.ErrTableNotFound) {
		return metaFromSchema(s), nil, nil // no table was ever rewritten here
	}
	if err != nil {
		return nil, nil, fmt.Errorf("hbase: table meta %q: %w", table, err)
	}
	var raw []byte
	for _, c := range rows[0].Cells {
		if c.Family == metaFamily && c.Qualifier == metaQualifier {
			raw = c.Value
		}
	}
	id, enc, ok := bytes.Cut(raw, []byte{'\n'})
	if !ok || string(id) != metaID(s) {
		return metaFromSchema(s), raw, nil
	}
	m := map[string]string{}
	if err := json.Unmarshal(enc, &m); err != nil {
		return nil, nil, fmt.Errorf("hbase: table meta %q: %s row: %w", table, MetaTable, err)
	}
	return m, raw, nil
}

// RewriteTableMeta replaces the table's Meta if it is still old; see MetaTable for why it is atomic.
func (b *Backend) RewriteTableMeta(ctx context.Context, table string, old, newMeta map[string]string) error {
	if table == MetaTable {
		return fmt.Errorf("hbase: rewrite meta %q: %w: the driver's own table", table, backends.ErrInvalidArgument)
	}
	if _, err := metaAttributes(newMeta); err != nil {
		return err
	}
	s, err := b.descriptor(ctx, table)
	if err != nil {
		return err
	}
	if err := b.CreateTable(ctx, MetaTable, backends.TableOptions{Families: []string{metaFamily}}); err != nil && !errors.Is(err, backends.ErrTableExists) {
		return fmt.Errorf("hbase: rewrite meta %q: create %s: %w", table, MetaTable, err)
	}
	cur, raw, err := b.currentMeta(ctx, table, s)
	if err != nil {
		return err
	}
	if !maps.Equal(cur, old) {
		return fmt.Errorf("hbase: rewrite meta %q: %w", table, backends.ErrMetaChanged)
	}
	if newMeta == nil {
		newMeta = map[string]string{}
	}
	enc, err := json.Marshal(newMeta)
	if err != nil {
		return fmt.Errorf("hbase: rewrite meta %q: %w", table, err)
	}
	val := append([]byte(metaID(s)+"\n"), enc...)
	applied, err := b.CheckAndMutate(ctx, MetaTable, backends.Condition{Family: metaFamily, Qualifier: metaQualifier, Value: raw},
		backends.Mutation{Key: []byte(table), Cells: []backends.Cell{{Family: metaFamily, Qualifier: metaQualifier, Value: val}}})
	if err != nil {
		return fmt.Errorf("hbase: rewrite meta %q: %w", table, err)
	}
	if !applied {
		return fmt.Errorf("hbase: rewrite meta %q: %w", table, backends.ErrMetaChanged)
	}
	return nil
}

// forgetMetaRow deletes a deleted table's MetaTable row. A failure only leaves a row that the id
// marks as stale, so it is logged, not returned.
func (b *Backend) forgetMetaRow(ctx context.Context, table string) {
	rowErrs, err := b.Apply(ctx, MetaTable, []backends.Mutation{{Key: []byte(table), Delete: true}})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil && !errors.Is(err, backends.ErrTableNotFound) {
		b.log.DebugContext(ctx, "hbase: meta row of a deleted table left", "table", table, "err", err)
	}
}
