package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/salting"
)

// MetaLayout is the meta key of a table's families and their settings, recorded at creation so that
// the table can be described and created again alike on another store (Describe).
const MetaLayout = "brine.layout"

// layout is MetaLayout's value.
type layout struct {
	Families      []string                 `json:"families"`
	MaxVersions   int                      `json:"max_versions,omitempty"`
	FamilyOptions map[string]FamilyOptions `json:"family_options,omitempty"`
}

// addLayout records families (defaulted) and the version settings in meta.
func (cfg TableConfig) addLayout(meta map[string]string, families []string) error {
	if _, ok := meta[MetaLayout]; ok {
		return fmt.Errorf("%w: Meta key %q is reserved for the families", backends.ErrInvalidArgument, MetaLayout)
	}
	b, err := json.Marshal(layout{Families: families, MaxVersions: cfg.MaxVersions, FamilyOptions: cfg.FamilyOptions})
	if err != nil {
		return fmt.Errorf("%w: family options: %w", backends.ErrInvalidArgument, err)
	}
	meta[MetaLayout] = string(b)
	return nil
}

// Describe returns the configuration the table was created with, as its stored meta records it: the
// salter, key schema, families with their settings, the indexes in use (not those being dropped),
// and the rest of Meta. Regions and SplitKeys are not recorded. A table created outside brine has no
// salter (nil); one created before brine recorded families has no Families (nil), and then no
// MaxVersions or FamilyOptions either. ErrTableNotFound if there is no such table.
func (c *Client) Describe(ctx context.Context, name string) (TableConfig, error) {
	meta, err := c.core.Backend.TableMeta(ctx, name)
	if err != nil {
		return TableConfig{}, fmt.Errorf("describe %q: %w", name, err)
	}
	var cfg TableConfig
	if spec := meta[MetaSaltSpec]; spec != "" {
		if cfg.Salter, err = salting.ParseStoredSpec(spec); err != nil {
			return TableConfig{}, fmt.Errorf("describe %q: stored salting spec: %w", name, err)
		}
	}
	if cfg.KeySchema, err = metaKeySchema(meta); err != nil {
		return TableConfig{}, fmt.Errorf("describe %q: %w", name, err)
	}
	if s := meta[MetaLayout]; s != "" {
		var l layout
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			return TableConfig{}, fmt.Errorf("describe %q: %w: stored families: %w", name, backends.ErrInvalidArgument, err)
		}
		cfg.Families, cfg.MaxVersions, cfg.FamilyOptions = l.Families, l.MaxVersions, l.FamilyOptions
	}
	if cfg.Indexes, err = declaredIndexes(meta); err != nil {
		return TableConfig{}, fmt.Errorf("describe %q: %w", name, err)
	}
	for i := range cfg.Indexes {
		cfg.Indexes[i].keyCell = false // declarations: a table created from them gets the newest format
	}
	internal := indexproto.Meta(meta)
	for k, v := range meta {
		if _, ok := internal[k]; ok || k == MetaSaltSpec || k == MetaKeySchema || k == MetaLayout {
			continue
		}
		if cfg.Meta == nil {
			cfg.Meta = map[string]string{}
		}
		cfg.Meta[k] = v
	}
	return cfg, nil
}
