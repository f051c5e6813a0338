package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
)

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
