package periods

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// createWidth is how many period tables CreateAhead and Drop create or drop at once: a store may take
// a second per table, and a year ahead is twelve.
const createWidth = client.DefaultConcurrency

// CreatePeriod creates the table of the period holding at, pre-split by its salter, and records it.
// cfg overrides the table's default client.TableConfig for this period (nil: the default; a nil
// Salter in it: the default salter), e.g. a new bucket count or per-period family TTL and
// compression. It is idempotent: a period table left by an interrupted CreatePeriod is adopted (and
// its spec checked).
func (t *Table) CreatePeriod(ctx context.Context, at time.Time, cfg *client.TableConfig) (Info, error) {
	tc := t.cfg.Table
	if cfg != nil {
		tc = *cfg
		if tc.Salter == nil {
			tc.Salter = t.cfg.Table.Salter
		}
		if len(tc.Families) == 0 {
			tc.Families = t.cfg.Table.Families
		}
	}
	iv := t.cfg.Interval
	info := Info{Table: iv.TableName(t.name, at), Start: iv.Start(at), End: iv.Next(at), Spec: tc.Salter.Spec()}
	tc.Meta = maps.Clone(tc.Meta)
	if tc.Meta == nil {
		tc.Meta = map[string]string{}
	}
	tc.Meta[metaPeriodOf] = t.name
	tc.Meta[metaPeriodAt] = info.Start.Format(periodRowTime)
	_, err := t.c.CreateTable(ctx, info.Table, tc)
	recorded := info // the period list's row: the spec spelled as the period's table stores it
	if errors.Is(err, client.ErrTableExists) {
		recorded.Spec, err = t.adoptPeriod(ctx, info)
	}
	if err != nil {
		return info, t.errorf("create period: %w", err)
	}
	if err := t.list.Put(ctx, periodRowKey(info.Start), periodRow(recorded)...); err != nil {
		return info, t.errorf("record period %q: %w", info.Table, err)
	}
	p, err := t.openPeriod(ctx, info)
	if err != nil {
		return info, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	list := slices.DeleteFunc(slices.Clone(t.periods), func(o period) bool { return o.info.Start.Equal(info.Start) })
	i, _ := slices.BinarySearchFunc(list, info.Start, func(o period, s time.Time) int { return o.info.Start.Compare(s) })
	t.periods = slices.Insert(list, i, p)
	return info, nil
}

// adoptPeriod accepts an existing table as the period's only if it was created as that period, and
// returns the spec as that table stores it (an earlier brine's spelling, for one it created).
func (t *Table) adoptPeriod(ctx context.Context, info Info) (string, error) {
	meta, err := t.c.Backend().TableMeta(ctx, info.Table)
	if err != nil {
		return "", err
	}
	if meta[metaPeriodOf] != t.name || meta[metaPeriodAt] != info.Start.Format(periodRowTime) {
		return "", fmt.Errorf("table %q exists and is not period %s of %q: %w", info.Table,
			info.Start.Format(periodRowTime), t.name, client.ErrTableExists)
	}
	stored := meta[client.MetaSaltSpec]
	if salting.CanonicalSpec(stored) != info.Spec {
		return "", fmt.Errorf("table %q: configured %q, table has %q: %w", info.Table, info.Spec, stored, client.ErrSpecMismatch)
	}
	return stored, nil
}

// CreateAhead makes sure the period holding now and the ahead periods after it exist, so writers
// never meet a period boundary without a table; the periods it creates get cfg as CreatePeriod
// gives it (nil: the table's default). It returns the periods it created.
func (t *Table) CreateAhead(ctx context.Context, now time.Time, ahead int, cfg *client.TableConfig) ([]Info, error) {
	if ahead < 0 {
		return nil, t.errorf("create ahead: %w: ahead %d", client.ErrInvalidArgument, ahead)
	}
	var starts []time.Time
	for at := t.cfg.Interval.Start(now); len(starts) <= ahead; at = t.cfg.Interval.Next(at) {
		starts = append(starts, at)
	}
	infos := make([]Info, len(starts))
	made := make([]bool, len(starts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createWidth)
	for i, at := range starts {
		if _, ok := t.periodAt(at); ok {
			continue
		}
		g.Go(func() error {
			info, err := t.CreatePeriod(gctx, at, cfg)
			if err != nil {
				return err
			}
			infos[i], made[i] = info, true
			return nil
		})
	}
	err := g.Wait()
	var created []Info
	for i, ok := range made {
		if ok {
			created = append(created, infos[i])
		}
	}
	return created, err
}

// Expired returns the periods that the retention drops at now, oldest first.
func (t *Table) Expired(now time.Time) []Info {
	r := t.cfg.Retention
	var started []Info
	for _, info := range t.Periods() {
		if !info.Start.After(now) {
			started = append(started, info)
		}
	}
	var out []Info
	for i, info := range started {
		byCount := r.Keep > 0 && i < len(started)-r.Keep
		byAge := r.OlderThan > 0 && info.End.Add(r.OlderThan).Before(now)
		if byCount || byAge {
			out = append(out, info)
		}
	}
	return out
}

// DropPeriod drops one period this handle knows (client.ErrTableNotFound otherwise): first its
// record, so no client that refreshes routes to it again, then its table and data. A table already
// gone (a drop interrupted after the record went, or another process's drop) is not an error.
func (t *Table) DropPeriod(ctx context.Context, table string) error {
	t.mu.RLock()
	i := slices.IndexFunc(t.periods, func(o period) bool { return o.info.Table == table })
	var info Info
	if i >= 0 {
		info = t.periods[i].info
	}
	t.mu.RUnlock()
	if i < 0 {
		return t.errorf("drop period %q: %w", table, client.ErrTableNotFound)
	}
	if err := t.list.Delete(ctx, periodRowKey(info.Start)); err != nil {
		return t.errorf("drop period %q: %w", table, err)
	}
	t.mu.Lock()
	t.periods = slices.DeleteFunc(slices.Clone(t.periods), func(o period) bool { return o.info.Table == table })
	t.mu.Unlock()
	if err := t.c.DeleteTable(ctx, table); err != nil && !errors.Is(err, client.ErrTableNotFound) {
		return t.errorf("drop period %q: %w", table, err)
	}
	return nil
}

// Expire drops every period the retention drops at now (Expired) and returns them.
func (t *Table) Expire(ctx context.Context, now time.Time) ([]Info, error) {
	var dropped []Info
	for _, info := range t.Expired(now) {
		if err := t.DropPeriod(ctx, info.Table); err != nil {
			return dropped, err
		}
		dropped = append(dropped, info)
	}
	return dropped, nil
}

// Drop deletes every period, several at once, and then the period table itself.
func (t *Table) Drop(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createWidth)
	for _, info := range t.Periods() {
		g.Go(func() error { return t.DropPeriod(gctx, info.Table) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := t.c.DeleteTable(ctx, t.name); err != nil {
		return fmt.Errorf("period table: %w", err)
	}
	return nil
}
