package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/salting"
)

// Errors of partitioned tables.
var (
	// ErrNoPeriod: a key's time lies in no live period of a partitioned table (not created yet, or
	// expired). Nothing was sent for that key.
	ErrNoPeriod = errors.New("brine: key's time is in no live period")
	// ErrPeriodExpired: a period's table was dropped while a read used it (retention ran during a
	// scan). The rows yielded before the error are a prefix of the full result.
	ErrPeriodExpired = errors.New("brine: period expired during the read")
)

// Keys of a partitioned table's meta. The partitioned table is one small table of its own (named as
// the logical table) whose meta holds the declaration and whose rows list the periods, one row per
// period; each period is a salted table like any other, whose own meta holds its spec.
const (
	metaPeriod    = "brine.partitioned.period"
	metaTime      = "brine.partitioned.time"
	metaSalt      = "brine.partitioned.salt"
	metaRetain    = "brine.partitioned.retain"
	metaFamilies  = "brine.partitioned.families"
	metaPeriodOf  = "brine.period.of"
	metaPeriodAt  = "brine.period.start"
	timeFuncName  = "func"
	periodRowPfx  = "period/"
	periodRowTime = "2006-01-02T15:04:05Z" // sorts as the time does, for years 0-9999
)

// Retention says which periods are past keeping. Both bounds apply when both are set; the zero value
// keeps everything.
type Retention struct {
	// Keep keeps the newest Keep periods that have started (periods created ahead never count).
	Keep int
	// OlderThan drops periods that ended more than OlderThan ago.
	OlderThan time.Duration
}

func (r Retention) String() string {
	var parts []string
	if r.Keep > 0 {
		parts = append(parts, "keep="+strconv.Itoa(r.Keep))
	}
	if r.OlderThan > 0 {
		parts = append(parts, "older="+r.OlderThan.String())
	}
	return strings.Join(parts, ",")
}

// ParseRetention reads Retention.String's form: "", "keep=12", "older=720h", "keep=12,older=720h".
func ParseRetention(s string) (Retention, error) {
	var r Retention
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		var err error
		switch k {
		case "keep":
			r.Keep, err = strconv.Atoi(v)
			if err == nil && r.Keep < 0 {
				err = errors.New("negative")
			}
		case "older":
			r.OlderThan, err = time.ParseDuration(v)
			if err == nil && r.OlderThan < 0 {
				err = errors.New("negative")
			}
		default:
			err = errors.New("want keep=N or older=DURATION")
		}
		if err != nil {
			return Retention{}, fmt.Errorf("%w: retention %q: %s: %v", backends.ErrInvalidArgument, s, part, err)
		}
	}
	return r, nil
}

// PartitionedConfig declares a partitioned table: one logical table over one physical table per
// period, each with its own salting spec.
type PartitionedConfig struct {
	// Period is how much time one physical table holds; required.
	Period Period
	// TimeField is the index of the key field (package keys) that holds the row's time: an Int64 of
	// milliseconds since the Unix epoch, ascending or descending. It need not be the first field.
	TimeField int
	// TimeOf, when set, is used instead of TimeField to find a key's time. A function cannot be
	// stored with the table: it records "func", and every open must pass TimeOf again.
	TimeOf func(key []byte) (time.Time, error)
	// Table is what each period's table is created with unless CreatePeriod is given another;
	// Table.Salter is required. Table.Meta is stored with the partitioned table as well.
	Table TableConfig
	// Retention is which periods Expire drops.
	Retention Retention
}

func (cfg PartitionedConfig) timeSpec() string {
	if cfg.TimeOf != nil {
		return timeFuncName
	}
	return "field:" + strconv.Itoa(cfg.TimeField)
}

func (cfg PartitionedConfig) meta() map[string]string {
	fams := cfg.Table.Families
	if len(fams) == 0 {
		fams = []string{DefaultFamily}
	}
	return map[string]string{
		MetaSaltSpec: "none", // the partitioned table's own rows are the unsalted period list
		metaPeriod:   cfg.Period.String(),
		metaTime:     cfg.timeSpec(),
		metaSalt:     cfg.Table.Salter.Spec(),
		metaRetain:   cfg.Retention.String(),
		metaFamilies: strings.Join(fams, ","),
	}
}

func (cfg PartitionedConfig) validate() error {
	switch {
	case cfg.Period.IsZero():
		return fmt.Errorf("%w: no period", backends.ErrInvalidArgument)
	case cfg.Table.Salter == nil:
		return fmt.Errorf("%w: no salter for the periods", backends.ErrInvalidArgument)
	case cfg.TimeOf == nil && cfg.TimeField < 0:
		return fmt.Errorf("%w: time field %d", backends.ErrInvalidArgument, cfg.TimeField)
	case cfg.Retention.Keep < 0 || cfg.Retention.OlderThan < 0:
		return fmt.Errorf("%w: negative retention", backends.ErrInvalidArgument)
	}
	for k := range cfg.Table.Meta {
		if k == MetaSaltSpec || strings.HasPrefix(k, "brine.partitioned.") || strings.HasPrefix(k, "brine.period.") {
			return fmt.Errorf("%w: Meta key %q is reserved", backends.ErrInvalidArgument, k)
		}
	}
	return nil
}

// IsPartitioned reports whether a table's meta is that of a partitioned table (OpenPartitioned opens
// it by its logical name).
func IsPartitioned(meta map[string]string) bool {
	_, ok := meta[metaPeriod]
	return ok
}

// configFromMeta rebuilds a declaration from the partitioned table's meta.
func configFromMeta(meta map[string]string, timeOf func([]byte) (time.Time, error)) (PartitionedConfig, error) {
	var cfg PartitionedConfig
	ps, ok := meta[metaPeriod]
	if !ok {
		return cfg, fmt.Errorf("%w: not a partitioned table (no %s in its meta)", ErrSpecMismatch, metaPeriod)
	}
	var err error
	if cfg.Period, err = ParsePeriod(ps); err != nil {
		return cfg, fmt.Errorf("stored period: %w", err)
	}
	if cfg.Table.Salter, err = salting.ParseSpec(meta[metaSalt]); err != nil {
		return cfg, fmt.Errorf("stored salting spec: %w", err)
	}
	if cfg.Retention, err = ParseRetention(meta[metaRetain]); err != nil {
		return cfg, fmt.Errorf("stored retention: %w", err)
	}
	cfg.Table.Families = strings.Split(meta[metaFamilies], ",")
	switch ts := meta[metaTime]; {
	case ts == timeFuncName && timeOf == nil:
		return cfg, fmt.Errorf("%w: the table finds a key's time with a Go function: pass TimeOf", backends.ErrInvalidArgument)
	case ts == timeFuncName:
		cfg.TimeOf = timeOf
	case strings.HasPrefix(ts, "field:"):
		if cfg.TimeField, err = strconv.Atoi(ts[len("field:"):]); err != nil {
			return cfg, fmt.Errorf("stored time field %q: %w", ts, err)
		}
	default:
		return cfg, fmt.Errorf("stored time field %q: unknown", ts)
	}
	return cfg, nil
}

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
	maps.Copy(meta, cfg.Table.Meta) // tools' meta (a key schema) belongs to the logical table too
	err := c.backend.CreateTable(ctx, name, backends.TableOptions{Families: []string{DefaultFamily}, Meta: meta})
	if err != nil {
		return nil, fmt.Errorf("create partitioned table %q: %w", name, err)
	}
	return &Partitioned{c: c, name: name, cfg: cfg, list: c.newTable(name, unsalted())}, nil
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
	p := &Partitioned{c: c, name: name, cfg: cfg, list: c.newTable(name, unsalted())}
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

// CreatePeriod creates the table of the period holding at, pre-split by its salter, and records it.
// cfg overrides the table's default TableConfig for this period (nil: the default; a nil Salter in
// it: the default salter), e.g. a new bucket count or per-period family TTL and compression. It is
// idempotent: a period table left by an interrupted CreatePeriod is adopted (and its spec checked).
func (p *Partitioned) CreatePeriod(ctx context.Context, at time.Time, cfg *TableConfig) (PeriodInfo, error) {
	tc := p.cfg.Table
	if cfg != nil {
		tc = *cfg
		if tc.Salter == nil {
			tc.Salter = p.cfg.Table.Salter
		}
		if len(tc.Families) == 0 {
			tc.Families = p.cfg.Table.Families
		}
	}
	per := p.cfg.Period
	info := PeriodInfo{
		Table: per.TableName(p.name, at), Start: per.Start(at), End: per.Next(at), Spec: tc.Salter.Spec(),
	}
	tc.Meta = maps.Clone(tc.Meta)
	if tc.Meta == nil {
		tc.Meta = map[string]string{}
	}
	tc.Meta[metaPeriodOf] = p.name
	tc.Meta[metaPeriodAt] = info.Start.Format(periodRowTime)
	_, err := p.c.CreateTable(ctx, info.Table, tc)
	if errors.Is(err, ErrTableExists) {
		err = p.adoptPeriod(ctx, info)
	}
	if err != nil {
		return info, fmt.Errorf("partitioned table %q: create period: %w", p.name, err)
	}
	if err := p.list.Put(ctx, periodRowKey(info.Start), periodRow(info)...); err != nil {
		return info, fmt.Errorf("partitioned table %q: record period %q: %w", p.name, info.Table, err)
	}
	pt, err := p.openPeriod(ctx, info)
	if err != nil {
		return info, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	list := slices.DeleteFunc(slices.Clone(p.periods), func(o periodTable) bool { return o.info.Start.Equal(info.Start) })
	i, _ := slices.BinarySearchFunc(list, info.Start, func(o periodTable, t time.Time) int { return o.info.Start.Compare(t) })
	p.periods = slices.Insert(list, i, pt)
	return info, nil
}

// adoptPeriod accepts an existing table as the period's only if it was created as that period.
func (p *Partitioned) adoptPeriod(ctx context.Context, info PeriodInfo) error {
	meta, err := p.c.backend.TableMeta(ctx, info.Table)
	if err != nil {
		return fmt.Errorf("table %q: %w", info.Table, err)
	}
	if meta[metaPeriodOf] != p.name || meta[metaPeriodAt] != info.Start.Format(periodRowTime) {
		return fmt.Errorf("table %q exists and is not period %s of %q: %w", info.Table,
			info.Start.Format(periodRowTime), p.name, ErrTableExists)
	}
	if meta[MetaSaltSpec] != info.Spec {
		return fmt.Errorf("table %q: configured %q, table has %q: %w", info.Table, info.Spec, meta[MetaSaltSpec], ErrSpecMismatch)
	}
	return nil
}

// CreateAhead makes sure the period holding now and the ahead periods after it exist, so writers
// never meet a period boundary without a table; the periods it creates get cfg as CreatePeriod
// gives it (nil: the table's default). It returns the periods it created.
func (p *Partitioned) CreateAhead(ctx context.Context, now time.Time, ahead int, cfg *TableConfig) ([]PeriodInfo, error) {
	if ahead < 0 {
		return nil, fmt.Errorf("partitioned table %q: create ahead: %w: ahead %d", p.name, backends.ErrInvalidArgument, ahead)
	}
	var starts []time.Time
	for at := p.cfg.Period.Start(now); len(starts) <= ahead; at = p.cfg.Period.Next(at) {
		starts = append(starts, at)
	}
	// At once: a store may take a second per table, and a year ahead is twelve.
	infos := make([]PeriodInfo, len(starts))
	made := make([]bool, len(starts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.c.concurrency)
	for i, at := range starts {
		if _, ok := p.periodAt(at); ok {
			continue
		}
		g.Go(func() error {
			info, err := p.CreatePeriod(gctx, at, cfg)
			if err != nil {
				return err
			}
			infos[i], made[i] = info, true
			return nil
		})
	}
	err := g.Wait()
	var created []PeriodInfo
	for i, ok := range made {
		if ok {
			created = append(created, infos[i])
		}
	}
	return created, err
}

// Expired returns the periods that the retention drops at now, oldest first.
func (p *Partitioned) Expired(now time.Time) []PeriodInfo {
	r := p.cfg.Retention
	var started []PeriodInfo
	for _, info := range p.Periods() {
		if !info.Start.After(now) {
			started = append(started, info)
		}
	}
	var out []PeriodInfo
	for i, info := range started {
		byCount := r.Keep > 0 && i < len(started)-r.Keep
		byAge := r.OlderThan > 0 && info.End.Add(r.OlderThan).Before(now)
		if byCount || byAge {
			out = append(out, info)
		}
	}
	return out
}

// DropPeriod drops one period this handle knows (ErrTableNotFound otherwise): first its record, so
// no client that refreshes routes to it again, then its table and data. A table already gone (a
// drop interrupted after the record went, or another process's drop) is not an error.
func (p *Partitioned) DropPeriod(ctx context.Context, table string) error {
	p.mu.RLock()
	i := slices.IndexFunc(p.periods, func(o periodTable) bool { return o.info.Table == table })
	var info PeriodInfo
	if i >= 0 {
		info = p.periods[i].info
	}
	p.mu.RUnlock()
	if i < 0 {
		return fmt.Errorf("partitioned table %q: drop period %q: %w", p.name, table, ErrTableNotFound)
	}
	if err := p.list.Delete(ctx, periodRowKey(info.Start)); err != nil {
		return fmt.Errorf("partitioned table %q: drop period %q: %w", p.name, table, err)
	}
	p.mu.Lock()
	p.periods = slices.DeleteFunc(slices.Clone(p.periods), func(o periodTable) bool { return o.info.Table == table })
	p.mu.Unlock()
	if err := p.c.backend.DeleteTable(ctx, table); err != nil && !errors.Is(err, ErrTableNotFound) {
		return fmt.Errorf("partitioned table %q: drop period %q: %w", p.name, table, err)
	}
	p.c.logger.InfoContext(ctx, "brine: period dropped", "table", p.name, "period", table)
	return nil
}

// Expire drops every period the retention drops at now (Expired) and returns them.
func (p *Partitioned) Expire(ctx context.Context, now time.Time) ([]PeriodInfo, error) {
	var dropped []PeriodInfo
	for _, info := range p.Expired(now) {
		if err := p.DropPeriod(ctx, info.Table); err != nil {
			return dropped, err
		}
		dropped = append(dropped, info)
	}
	return dropped, nil
}

// Drop deletes every period, several at once (a store may take seconds per table), and then the
// partitioned table itself.
func (p *Partitioned) Drop(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.c.concurrency)
	for _, info := range p.Periods() {
		g.Go(func() error { return p.DropPeriod(gctx, info.Table) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return p.c.DeleteTable(ctx, p.name)
}

// unsalted is the salter of the period list: "none" always parses.
func unsalted() salting.Salter {
	s, err := salting.ParseSpec("none")
	if err != nil {
		panic(err)
	}
	return s
}
