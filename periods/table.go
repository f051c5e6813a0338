package periods

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Info describes one period of a period table.
type Info struct {
	Table string    // the period's table
	Start time.Time // inclusive, UTC
	End   time.Time // exclusive, UTC
	Spec  string    // the period's salting spec, as Salter.Spec spells it (the period list may hold an earlier brine's spelling)
}

type period struct {
	info Info
	t    *client.Table
}

// Table is one logical table over one table per period. Writes go to the period of the key's time;
// scans open only the periods a range can hold rows of and merge them into one stream in logical
// order. It is safe for concurrent use.
type Table struct {
	c    *client.Client
	name string
	cfg  Config
	list *client.Table // the period table itself: one row per period; its key schema is the logical table's

	mu      sync.RWMutex
	periods []period // sorted by start; replaced, never changed in place
}

// A period table's rows are read and written as any table's, so that programs taking any kind
// (the brine CLI) take it too.
var _ client.TableAPI = (*Table)(nil)

// Create creates the period table name on c (its declaration and, as rows, its period list). It
// creates no period: call CreateAhead or CreatePeriod.
func Create(ctx context.Context, c *client.Client, name string, cfg Config) (*Table, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("create period table %q: %w", name, err)
	}
	meta := cfg.meta()
	maps.Copy(meta, cfg.Table.Meta) // tools' meta belongs to the logical table too
	list, err := c.CreateTable(ctx, name, client.TableConfig{Salter: unsalted(), Meta: meta, KeySchema: cfg.Table.KeySchema})
	if err != nil {
		return nil, fmt.Errorf("period table: %w", err)
	}
	cfg.Table.KeySchema = list.KeySchema() // also when it came from Meta
	return &Table{c: c, name: name, cfg: cfg, list: list}, nil
}

// Open opens the period table name on c and loads its period list. With want nil it adopts the
// stored declaration (a table declared with TimeOf cannot be opened so); otherwise the stored
// interval, time field, default spec and retention must equal want's, or it fails with
// client.ErrSpecMismatch before anything is read or written. Each period's table is checked against
// the spec recorded for it.
func Open(ctx context.Context, c *client.Client, name string, want *Config) (*Table, error) {
	meta, err := c.Backend().TableMeta(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("open period table %q: %w", name, err)
	}
	var timeOf func([]byte) (time.Time, error)
	if want != nil {
		timeOf = want.TimeOf
	}
	cfg, err := configFromMeta(meta, timeOf)
	if err != nil {
		return nil, fmt.Errorf("open period table %q: %w", name, err)
	}
	if want != nil {
		if err := want.validate(); err != nil {
			return nil, fmt.Errorf("open period table %q: %w", name, err)
		}
		got, exp := cfg.meta(), want.meta()
		delete(got, metaFamilies) // families only shape tables created later
		delete(exp, metaFamilies)
		if !maps.Equal(got, exp) {
			return nil, fmt.Errorf("open period table %q: configured %v, stored %v: %w", name, exp, got, client.ErrSpecMismatch)
		}
		cfg.Table = want.Table
	}
	list, err := c.OpenTable(ctx, name, unsalted())
	if err != nil {
		return nil, fmt.Errorf("period table: %w", err)
	}
	if cfg.Table.KeySchema == nil { // new periods keep the logical table's schema
		cfg.Table.KeySchema = list.KeySchema()
	}
	t := &Table{c: c, name: name, cfg: cfg, list: list}
	if err := t.Refresh(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// Name is the logical table's name.
func (t *Table) Name() string { return t.name }

// Config is the table's declaration.
func (t *Table) Config() Config { return t.cfg }

// KeySchema is the key schema stored with the logical table, as client.Table.KeySchema.
func (t *Table) KeySchema() *keys.Schema { return t.list.KeySchema() }

// Periods returns the live periods, oldest first, as this handle last loaded them.
func (t *Table) Periods() []Info {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Info, len(t.periods))
	for i, p := range t.periods {
		out[i] = p.info
	}
	return out
}

// PeriodTable returns the table of one live period, by its name (for exports).
func (t *Table) PeriodTable(name string) (*client.Table, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, p := range t.periods {
		if p.info.Table == name {
			return p.t, nil
		}
	}
	return nil, t.errorf("period %q: %w", name, client.ErrTableNotFound)
}

// Refresh reloads the period list, which other processes change (create-ahead, expiry).
func (t *Table) Refresh(ctx context.Context) error {
	var list []period
	for row, err := range t.list.Scan(ctx, client.PrefixRange([]byte(periodRowPfx))) {
		if err != nil {
			return t.errorf("load periods: %w", err)
		}
		info, err := periodFromRow(row)
		if err != nil {
			return t.errorf("period row %q: %w", row.Key, err)
		}
		p, err := t.openPeriod(ctx, info)
		if err != nil {
			return err
		}
		list = append(list, p)
	}
	t.mu.Lock()
	t.periods = list
	t.mu.Unlock()
	return nil
}

// openPeriod reuses this handle's table of a period it knows already, else opens it with its
// recorded spec, which the period's table's own stored spec must match.
func (t *Table) openPeriod(ctx context.Context, info Info) (period, error) {
	t.mu.RLock()
	for _, p := range t.periods {
		if p.info == info {
			t.mu.RUnlock()
			return p, nil
		}
	}
	t.mu.RUnlock()
	s, err := salting.ParseStoredSpec(info.Spec)
	if err != nil {
		return period{}, t.errorf("period %q: %w", info.Table, err)
	}
	pt, err := t.c.OpenTable(ctx, info.Table, s)
	if err != nil {
		return period{}, t.errorf("%w", err)
	}
	return period{info: info, t: pt}, nil
}

// errorf is an error about the logical table, named once.
func (t *Table) errorf(format string, args ...any) error {
	return fmt.Errorf("period table %q: "+format, append([]any{t.name}, args...)...)
}

// keyText prints a key for an error as the logical table's key schema prints it, else quoted.
func (t *Table) keyText(k []byte) string {
	if ks := t.list.KeySchema(); ks != nil {
		if s, err := ks.Format(k); err == nil {
			return s
		}
	}
	const most = 64 // keys can be 32 KiB: an error quotes the start
	if len(k) > most {
		return fmt.Sprintf("%q... (%d bytes)", k[:most], len(k))
	}
	return strconv.Quote(string(k))
}

func periodRowKey(start time.Time) []byte {
	return []byte(periodRowPfx + start.UTC().Format(periodRowTime))
}

func periodRow(info Info) []client.Cell {
	c := func(q, v string) client.Cell {
		return client.Cell{Family: client.DefaultFamily, Qualifier: q, Value: []byte(v)}
	}
	return []client.Cell{
		c("end", info.End.Format(periodRowTime)),
		c("spec", info.Spec),
		c("table", info.Table),
	}
}

func periodFromRow(row client.Row) (Info, error) {
	var info Info
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
			info.Spec = salting.CanonicalSpec(string(cell.Value))
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
