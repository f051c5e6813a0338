package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// checkIndexes refuses bad or duplicate index definitions before anything is created.
func checkIndexes(families []string, ks *keys.Schema, defs []IndexConfig) error {
	seen := map[string]bool{}
	for _, d := range defs {
		if err := d.check(families, ks); err != nil {
			return err
		}
		if seen[d.Name] {
			return fmt.Errorf("%w: index %q declared twice", backends.ErrInvalidArgument, d.Name)
		}
		seen[d.Name] = true
	}
	return nil
}

// addIndexMeta stores the definitions with the table, as the salting spec is.
func addIndexMeta(meta map[string]string, families []string, defs []IndexConfig) error {
	for k := range meta {
		if strings.HasPrefix(k, metaIndexPrefix) || strings.HasPrefix(k, metaIndexStatePrefix) || k == metaIndexFamily {
			return fmt.Errorf("%w: Meta key %q is reserved for index definitions", backends.ErrInvalidArgument, k)
		}
	}
	if len(defs) == 0 {
		return nil
	}
	meta[metaIndexFamily] = families[0]
	for _, d := range defs {
		meta[metaIndexPrefix+d.Name] = d.metaSpec()
	}
	return nil
}

// createIndexTables creates each index's table, pre-split at its own salter's buckets.
func (c *Client) createIndexTables(ctx context.Context, table string, defs []IndexConfig) error {
	for _, d := range defs {
		s := d.salter()
		opts := backends.TableOptions{
			Families:  []string{indexFamily},
			SplitKeys: s.SplitKeys(0),
			Meta:      map[string]string{MetaSaltSpec: s.Spec()},
		}
		if err := c.core.Backend.CreateTable(ctx, IndexTableName(table, d.Name), opts); err != nil {
			return fmt.Errorf("index %q: %w", d.Name, err)
		}
	}
	return nil
}

// salter is the index table's salter: Salter, or "none".
func (cfg IndexConfig) salter() salting.Salter {
	if cfg.Salter != nil {
		return cfg.Salter
	}
	s, _ := salting.ParseSpec("none")
	return s
}

// attachIndexes gives t the indexes its meta declares, sorted by name, but the ones being dropped,
// which writers no longer keep.
func (c *Client) attachIndexes(t *indexedTable, meta map[string]string) error {
	cfgs, err := declaredIndexes(meta)
	if err != nil {
		return err
	}
	for _, cfg := range cfgs {
		ix := c.newIndex(t, cfg)
		ix.state = indexState(meta, cfg.Name)
		t.indexes = append(t.indexes, ix)
	}
	t.indexFamily, t.declared = indexproto.Indexed(meta)
	t.fence, _ = indexproto.ParseFence(meta)
	if len(t.indexes) > 0 && t.indexFamily == "" {
		return fmt.Errorf("%w: indexes without %q in the table meta", backends.ErrInvalidArgument, metaIndexFamily)
	}
	return nil
}

func (c *Client) newIndex(t *indexedTable, cfg IndexConfig) *Index {
	cfg.Salter = cfg.salter()
	// The index table follows its own rebuckets (Table.RebucketIndex): cfg.Salter is the spec
	// it was created with, the directory names the one serving it.
	ix := &Index{t: t, cfg: cfg, def: cfg.def(), table: c.lazyRoutedTable(IndexTableName(t.Name(), cfg.Name), cfg.Salter), grace: DefaultIndexGrace}
	ix.table.setKeySchema(entrySchema(cfg, t.t.keySchema))
	return ix
}

// entrySchema is the key schema of an index's entry keys, by which errors and reports print them as
// the CLI takes index values: each part (a column's value, or the main key's field), then, unless the
// index is unique, the main key's fields. nil when they cannot be read: a key part, or a main key,
// with no key schema to read it by.
func entrySchema(cfg IndexConfig, main *keys.Schema) *keys.Schema {
	var fields []keys.Field
	for i, p := range cfg.Parts {
		switch {
		case p.Column.Family != "":
			fields = append(fields, keys.Field{Name: fmt.Sprintf("p%d", i), Kind: keys.KindBytes, Desc: p.Desc})
		case main != nil && p.KeyField < main.Len():
			f := main.Fields()[p.KeyField]
			f.Name = fmt.Sprintf("p%d", i)
			fields = append(fields, f)
		default:
			return nil
		}
	}
	if !cfg.Unique {
		if main == nil {
			return nil
		}
		for i, f := range main.Fields() {
			f.Name = fmt.Sprintf("k%d", i)
			fields = append(fields, f)
		}
	}
	ks, err := keys.NewSchema(fields...)
	if err != nil {
		return nil
	}
	return ks
}

// matchIndexes is CreateOrOpenTable's check: the definitions given are the ones stored.
func matchIndexes(name string, t *indexedTable, defs []IndexConfig) error {
	want := make([]string, len(defs))
	for i, d := range defs {
		want[i] = d.Name + "=" + d.spec()
	}
	got := make([]string, len(t.indexes))
	for i, ix := range t.indexes {
		got[i] = ix.cfg.Name + "=" + ix.Spec()
	}
	slices.Sort(want)
	if !slices.Equal(want, got) {
		return fmt.Errorf("open table %q: configured %q, table has %q: %w", name, want, got, ErrIndexMismatch)
	}
	return nil
}

// deleteIndexTables removes the index tables of a table about to be deleted (rebucketed ones by
// their directory rows), unless a rebucket of the table is under way, which DeleteTable refuses.
func (c *Client) deleteIndexTables(ctx context.Context, table string) error {
	phys := table
	row, found, err := route.ReadDir(ctx, c.core.Backend, table)
	switch {
	case err != nil:
		return err
	case found && !row.Serving():
		return nil // route.DeleteRebucketed refuses
	case found:
		phys = row.Phys()
	}
	meta, err := c.core.Backend.TableMeta(ctx, phys)
	if err != nil {
		return nil // DeleteTable reports it
	}
	for k := range meta {
		if name, ok := strings.CutPrefix(k, metaIndexPrefix); ok {
			ixTable := IndexTableName(table, name)
			done, err := route.DeleteRebucketed(ctx, c.core.Backend, ixTable)
			if !done && err == nil {
				err = c.core.Backend.DeleteTable(ctx, ixTable)
			}
			if err != nil && !errors.Is(err, ErrTableNotFound) {
				return fmt.Errorf("delete index %q: %w", name, err)
			}
		}
	}
	return nil
}

// declaredIndexes are the definitions of the indexes a table's meta declares, sorted by name, but the
// ones being dropped.
func declaredIndexes(meta map[string]string) ([]IndexConfig, error) {
	var cfgs []IndexConfig
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		name, ok := strings.CutPrefix(k, metaIndexPrefix)
		if !ok {
			continue
		}
		cfg, err := storedIndexConfig(name, meta[k])
		if err != nil {
			return nil, err
		}
		if indexState(meta, name) != IndexDropping {
			cfgs = append(cfgs, cfg)
		}
	}
	return cfgs, nil
}
