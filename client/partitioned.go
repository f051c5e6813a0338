package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// PeriodInfo describes one period of a partitioned table.
type PeriodInfo struct {
	Table string    // the physical table
	Start time.Time // inclusive, UTC
	End   time.Time // exclusive, UTC
	Spec  string    // the period's salting spec
}

type periodTable struct {
	info PeriodInfo
	t    *Table
}

// Partitioned is one logical table over one physical table per period. Writes go to the period of
// the key's time; scans open only the periods a range can hold rows of and merge them into one
// stream in logical order. It is safe for concurrent use.
type Partitioned struct {
	c    *Client
	name string
	cfg  PartitionedConfig
	list *Table // the partitioned table itself: one row per period
	// keySchema is the logical table's (cfg.Table's when created, stored meta's when opened).
	keySchema *keys.Schema

	mu      sync.RWMutex
	periods []periodTable // sorted by start; replaced, never changed in place
}

// CreatePartitioned creates the partitioned table name (its declaration and, as rows, its period
// list). It creates no period: call CreateAhead or CreatePeriod.
func (c *Client) CreatePartitioned(ctx context.Context, name string, cfg PartitionedConfig) (*Partitioned, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("create partitioned table %q: %w", name, err)
	}
	meta := cfg.meta()
	maps.Copy(meta, cfg.Table.Meta) // tools' meta belongs to the logical table too
	var err error
	if cfg.Table.KeySchema, err = cfg.Table.addKeySchema(meta); err != nil {
		return nil, fmt.Errorf("create partitioned table %q: %w", name, err)
	}
	err = c.backend.CreateTable(ctx, name, backends.TableOptions{Families: []string{DefaultFamily}, Meta: meta})
	if err != nil {
		return nil, fmt.Errorf("create partitioned table %q: %w", name, err)
	}
	return &Partitioned{c: c, name: name, cfg: cfg, list: c.plainTable(name, unsalted()), keySchema: cfg.Table.KeySchema}, nil
}

// OpenPartitioned opens the partitioned table name and loads its period list. With want nil it adopts
// the stored declaration (a table declared with TimeOf cannot be opened so); otherwise the stored
// period, time field, default spec and retention must equal want's, or it fails with
// ErrSpecMismatch before anything is read or written. Each period's table is checked against the
// spec recorded for it.
func (c *Client) OpenPartitioned(ctx context.Context, name string, want *PartitionedConfig) (*Partitioned, error) {
	meta, err := c.backend.TableMeta(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("open partitioned table %q: %w", name, err)
	}
	var timeOf func([]byte) (time.Time, error)
	if want != nil {
		timeOf = want.TimeOf
	}
	cfg, err := configFromMeta(meta, timeOf)
	if err != nil {
		return nil, fmt.Errorf("open partitioned table %q: %w", name, err)
	}
	if want != nil {
		if err := want.validate(); err != nil {
			return nil, fmt.Errorf("open partitioned table %q: %w", name, err)
		}
		got, exp := cfg.meta(), want.meta()
		delete(got, metaFamilies) // families only shape tables created later
		delete(exp, metaFamilies)
		if !maps.Equal(got, exp) {
			return nil, fmt.Errorf("open partitioned table %q: configured %v, stored %v: %w", name, exp, got, ErrSpecMismatch)
		}
		cfg.Table = want.Table
	}
	p := &Partitioned{c: c, name: name, cfg: cfg, list: c.plainTable(name, unsalted())}
	if p.keySchema, err = metaKeySchema(meta); err != nil {
		return nil, fmt.Errorf("open partitioned table %q: %w", name, err)
	}
	if cfg.Table.KeySchema == nil { // new periods keep the logical table's schema
		p.cfg.Table.KeySchema = p.keySchema
	}
	if err := p.Refresh(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Name is the logical table's name.
func (p *Partitioned) Name() string { return p.name }

// Config is the table's declaration.
func (p *Partitioned) Config() PartitionedConfig { return p.cfg }

// Periods returns the live periods, oldest first, as this handle last loaded them.
func (p *Partitioned) Periods() []PeriodInfo {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]PeriodInfo, len(p.periods))
	for i, pt := range p.periods {
		out[i] = pt.info
	}
	return out
}

// PeriodTable returns the table of one live period, by its physical name (for exports).
func (p *Partitioned) PeriodTable(name string) (*Table, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, pt := range p.periods {
		if pt.info.Table == name {
			return pt.t, nil
		}
	}
	return nil, fmt.Errorf("partitioned table %q: period %q: %w", p.name, name, ErrTableNotFound)
}

// Refresh reloads the period list, which other processes change (create-ahead, expiry).
func (p *Partitioned) Refresh(ctx context.Context) error {
	var list []periodTable
	for row, err := range p.list.Scan(ctx, PrefixRange([]byte(periodRowPfx))) {
		if err != nil {
			return fmt.Errorf("partitioned table %q: load periods: %w", p.name, err)
		}
		info, err := periodFromRow(row)
		if err != nil {
			return fmt.Errorf("partitioned table %q: period row %s: %w", p.name, keyText(row.Key), err)
		}
		pt, err := p.openPeriod(ctx, info)
		if err != nil {
			return err
		}
		list = append(list, pt)
	}
	p.mu.Lock()
	p.periods = list
	p.mu.Unlock()
	return nil
}

// openPeriod reuses this handle's table of a period it knows already, else opens it with its
// recorded spec, which the period table's own stored spec must match.
func (p *Partitioned) openPeriod(ctx context.Context, info PeriodInfo) (periodTable, error) {
	p.mu.RLock()
	for _, pt := range p.periods {
		if pt.info == info {
			p.mu.RUnlock()
			return pt, nil
		}
	}
	p.mu.RUnlock()
	s, err := salting.ParseSpec(info.Spec)
	if err != nil {
		return periodTable{}, fmt.Errorf("partitioned table %q: period %q: %w", p.name, info.Table, err)
	}
	t, err := p.c.OpenTable(ctx, info.Table, s)
	if err != nil {
		return periodTable{}, fmt.Errorf("partitioned table %q: %w", p.name, err)
	}
	return periodTable{info: info, t: t}, nil
}

func periodRowKey(start time.Time) []byte {
	return []byte(periodRowPfx + start.UTC().Format(periodRowTime))
}

func periodRow(info PeriodInfo) []Cell {
	c := func(q, v string) Cell { return Cell{Family: DefaultFamily, Qualifier: q, Value: []byte(v)} }
	return []Cell{
		c("end", info.End.Format(periodRowTime)),
		c("spec", info.Spec),
		c("table", info.Table),
	}
}

func periodFromRow(row Row) (PeriodInfo, error) {
	var info PeriodInfo
	start, err := time.Parse(periodRowTime, strings.TrimPrefix(string(row.Key), periodRowPfx))
	if err != nil {
		return info, err
	}
	info.Start = start
	for _, cell := range row.Cells {
		switch cell.Qualifier {
		case "end":
			if info.End, err = time.Parse(periodRowTime, string(cell.Value)); err != nil {
				return info, err
			}
		case "spec":
			info.Spec = string(cell.Value)
		case "table":
			info.Table = string(cell.Value)
		}
	}
	if info.Table == "" || info.Spec == "" || !info.End.After(info.Start) {
		return info, errors.New("incomplete period record")
	}
	return info, nil
}

// unsalted is the salter of the period list: "none" always parses.
func unsalted() salting.Salter {
	s, err := salting.ParseSpec("none")
	if err != nil {
		panic(err)
	}
	return s
}
