package client

import (
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
)

// MetaKeySchema is the table-meta key under which a table's key schema (TableConfig.KeySchema) is
// stored, as its spec (keys.ParseSchema).
const MetaKeySchema = "brine.keys"

// keySchema is the key schema cfg stores: KeySchema, or a spec a tool put in Meta itself; when both
// are given they must be the same schema.
func (cfg TableConfig) keySchema() (*keys.Schema, error) {
	stored, err := metaKeySchema(cfg.Meta)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %w", backends.ErrInvalidArgument, err)
	case cfg.KeySchema == nil:
		return stored, nil
	case stored != nil && stored.String() != cfg.KeySchema.String():
		return nil, fmt.Errorf("%w: KeySchema %q and Meta[%q] %q disagree", backends.ErrInvalidArgument, cfg.KeySchema, MetaKeySchema, stored)
	}
	return cfg.KeySchema, nil
}

// addKeySchema writes cfg's key schema into meta, the table's meta to be, and returns it.
func (cfg TableConfig) addKeySchema(meta map[string]string) (*keys.Schema, error) {
	ks, err := cfg.keySchema()
	if ks != nil {
		meta[MetaKeySchema] = ks.String()
	}
	return ks, err
}

// metaKeySchema is the key schema stored in a table's meta; nil when it has none.
func metaKeySchema(meta map[string]string) (*keys.Schema, error) {
	spec, ok := meta[MetaKeySchema]
	if !ok {
		return nil, nil
	}
	ks, err := keys.ParseSchema(spec)
	if err != nil {
		return nil, fmt.Errorf("key schema %q (meta %s): %w", spec, MetaKeySchema, err)
	}
	return ks, nil
}

// KeySchema is the key schema stored with the table (TableConfig.KeySchema), nil for none. With one,
// KeyRegexFilter matches the key as the schema prints it.
func (t *Table) KeySchema() *keys.Schema { return t.keySchema }

// KeySchema is the key schema stored with the table, or nil.
func (it *indexedTable) KeySchema() *keys.Schema { return it.t.keySchema }

// printKey prints a key of this table as its key schema prints it (route.PrintKey).
func (t *Table) printKey(k []byte) string { return route.PrintKey(t.keySchema, k) }

// setKeySchema gives the handle its table's key schema, and its router's physical tables too (their
// errors print keys). Called while the handle is opened, before anyone else holds it.
func (t *Table) setKeySchema(ks *keys.Schema) {
	t.keySchema = ks
	t.rt.SetKeySchema(ks)
}
