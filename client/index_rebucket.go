package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/salting"
)

// Rebucket moves the main table to a new salting spec, as Table.Rebucket does, while its writers
// keep the indexes. The index entries hold the main rows' logical keys, which a rebucket keeps, so
// the index tables are not touched: every read and write of the protocol goes to the main table
// through its router (a write's row is copied, version column and all, to the new table before its
// compare-and-set on the version), and a read by index reads the main rows the same way.
//
// opts.Families must name every family of the table, among them the one holding the version
// column and every family an index reads: a whole-row delete during the rebucket deletes those.
func (it *indexedTable) Rebucket(ctx context.Context, to salting.Salter, opts RebucketOptions) error {
	if len(opts.Families) == 0 {
		opts.Families = []string{DefaultFamily}
	}
	if err := it.refuseChanging("rebucket"); err != nil {
		return err
	}
	need := []string{it.indexFamily}
	for _, ix := range it.indexes {
		for _, c := range ix.def.Columns() {
			need = append(need, c.Family)
		}
	}
	for _, f := range need {
		if !slices.Contains(opts.Families, f) {
			return fmt.Errorf("rebucket %s: %w: Families %v lack %q, which the indexes use (a whole-row delete must delete it)",
				it.Name(), backends.ErrInvalidArgument, opts.Families, f)
		}
	}
	return it.t.rebucket(ctx, to, opts)
}

// RebucketIndex moves one index's table to a new salting spec, as Table.Rebucket moves a table,
// while the table's writers and readers run: every handle's index writes and reads follow the
// index table's router, so entries land in, and are read from, the table the rebucket's step says.
// The spec stored with the table's index definition (Index.Config, Spec) stays the one the index was
// created with; the directory (RebucketStatus of IndexTableName) names the one serving it. Families
// and MaxVersions of opts are the index table's own and ignored.
func (it *indexedTable) RebucketIndex(ctx context.Context, name string, to salting.Salter, opts RebucketOptions) error {
	ix, err := it.Index(name)
	if err != nil {
		return fmt.Errorf("rebucket index: %w", err)
	}
	if err := it.refuseChanging("rebucket index"); err != nil {
		return err
	}
	opts.Families, opts.MaxVersions = []string{indexFamily}, 0
	return ix.table.rebucket(ctx, to, opts)
}

// refuseChanging fails while an index is being added or dropped: the rebucket copies the table's
// meta when it starts, and AddIndex or DropIndex would rewrite the old table's copy after that.
func (it *indexedTable) refuseChanging(op string) error {
	for _, ix := range it.latest().indexes {
		if ix.state != IndexActive {
			return fmt.Errorf("%s %s: %w: index %s is %s; finish AddIndex or DropIndex first", op, it.Name(), ErrIndexBuilding, ix.cfg.Name, ix.state)
		}
	}
	return nil
}

// refuseIndexTable fails when name is the table of an index: its rebucket must keep the entries'
// own families, which Table.RebucketIndex does.
func (c *Client) refuseIndexTable(ctx context.Context, name string) error {
	table, index, err := c.IndexTableOf(ctx, name)
	if err != nil {
		return fmt.Errorf("rebucket %s: %w", name, err)
	}
	if index != "" {
		return fmt.Errorf("rebucket %s: %w: it is index %q of %s: rebucket it with Table.RebucketIndex", name, backends.ErrInvalidArgument, index, table)
	}
	return nil
}

// IndexTableOf reports which table and index name, an IndexTableName, belongs to; both are empty
// when it belongs to no index of a table in the store.
func (c *Client) IndexTableOf(ctx context.Context, name string) (table, index string, err error) {
	const sep = "__ix_"
	for i := strings.Index(name, sep); i > 0; {
		table, index = name[:i], name[i+len(sep):]
		phys := table // the physical table serving it holds the definitions
		if row, found, err := route.ReadDir(ctx, c.core.Backend, table); err != nil {
			return "", "", err
		} else if found {
			phys = row.Phys()
		}
		meta, err := c.core.Backend.TableMeta(ctx, phys)
		if err != nil && !errors.Is(err, backends.ErrTableNotFound) {
			return "", "", err
		}
		if _, ok := meta[metaIndexPrefix+index]; ok {
			return table, index, nil
		}
		j := strings.Index(name[i+1:], sep)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "", "", nil
}
