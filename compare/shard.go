package compare

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/shardplan"
	"github.com/brine-kv/brine/salting"
)

// Shard is shard Index of Count: the part of a table's rows one of Count processes handles, so
// that Count of them, on as many machines, each do 1/Count of a copy, a comparison or a sync
// (migrate.Options.Shard, migrate.SyncOptions.Shard, Options.Shard). The zero value is the whole
// table.
//
// The plan is fixed by the source table's bucket count alone, the same in every process and every
// run: with Count no more than the buckets, each shard is a contiguous run of whole buckets; with
// more, each bucket is split further into ranges of its logical key space, cut evenly by the keys'
// first bytes (even in keys, not rows: docs/migrate.md says which tables that suits). Every row
// belongs to exactly one shard.
type Shard struct {
	Index int // 0 to Count-1, as Kubernetes' JOB_COMPLETION_INDEX counts
	Count int // the shards of the plan; 0: no sharding
}

// ParseShard reads "I/N": shard I of N, I from 0 to N-1 ("--shard $JOB_COMPLETION_INDEX/N").
// Anything else fails with client.ErrInvalidArgument, saying what is wrong.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: %w: want I/N, shard I (0 to N-1, as JOB_COMPLETION_INDEX counts) of N", s, client.ErrInvalidArgument)
	}
	if i == "" {
		return Shard{}, fmt.Errorf("shard %q: %w: no index before the slash (an unset JOB_COMPLETION_INDEX?); want I/N", s, client.ErrInvalidArgument)
	}
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if err := errors.Join(err1, err2); err != nil || strings.ContainsAny(s, "+ ") {
		return Shard{}, fmt.Errorf("shard %q: %w: want I/N, two whole numbers, shard I (0 to N-1) of N", s, client.ErrInvalidArgument)
	}
	sh := Shard{Index: index, Count: count}
	if err := sh.Check(); err != nil {
		return Shard{}, fmt.Errorf("shard %q: %w", s, err)
	}
	return sh, nil
}

// String is the shard as ParseShard reads it, "I/N"; "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Sharded reports whether s names a shard: a Count of 1 or more.
func (s Shard) Sharded() bool { return s.Count != 0 }

// Check reports a shard that names none: Count below 0 or above 1,048,576, or an Index outside 0 to
// Count-1 (client.ErrInvalidArgument).
func (s Shard) Check() error {
	switch {
	case s == Shard{}:
		return nil
	case s.Count < 1:
		return fmt.Errorf("%w: the shard count N is %d, want 1 or more", client.ErrInvalidArgument, s.Count)
	case s.Count > shardplan.MaxCount:
		return fmt.Errorf("%w: the shard count N is %d, want at most %d", client.ErrInvalidArgument, s.Count, shardplan.MaxCount)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("%w: the shard index I is %d, want 0 to %d (N-1: JOB_COMPLETION_INDEX counts from 0)", client.ErrInvalidArgument, s.Index, s.Count-1)
	}
	return nil
}

// salted is a side that says how it is salted: a client.Table.
type salted interface{ Salter() salting.Salter }

// shardSides restricts both sides to shard s of a's plan within r: a is read by the shard's buckets
// only, b likewise when it is salted as a is, else whole over the range and filtered by a's salter,
// so that a target re-salted by a copy is compared shard for shard. ok is false when the shard holds
// no key of r.
func shardSides(a, b Source, s Shard, r client.Range) (sa, sb Source, rr client.Range, ok bool, err error) {
	if err := s.Check(); err != nil {
		return nil, nil, r, false, err
	}
	as, isSalted := a.(salted)
	if !isSalted || as.Salter() == nil {
		return nil, nil, r, false, fmt.Errorf("%w: Shard: side a is not a salted table, nor are both sides period tables: a salted table's buckets make the plan", client.ErrInvalidArgument)
	}
	salter := as.Salter()
	p := shardplan.Of(salter.Buckets(), s.Index, s.Count)
	rr.Start, rr.End, ok = p.Intersect(r.Start, r.End)
	sa = &shardSource{Source: a, buckets: client.Buckets(p.Buckets...)}
	if bs, isSalted := b.(salted); isSalted && bs.Salter() != nil && bs.Salter().Spec() == salter.Spec() {
		sb = &shardSource{Source: b, buckets: client.Buckets(p.Buckets...)}
	} else {
		sb = &shardSource{Source: b, keep: func(key []byte) bool { return p.Contains(bucketOf(salter, key), key) }}
	}
	return sa, sb, rr, ok, nil
}

// bucketOf is the bucket of key under s; a key s cannot place (so not one a table salted by s holds)
// counts as bucket 0's, so that it is in exactly one shard all the same.
func bucketOf(s salting.Salter, key []byte) int {
	b, err := s.Bucket(key)
	if err != nil {
		return 0
	}
	return b
}

// shardSource is one side of a sharded comparison: its scans read the shard's buckets (buckets), or
// keep the rows of the shard's (keep).
type shardSource struct {
	Source
	buckets client.ReadOption
	keep    func(key []byte) bool
}

func (s *shardSource) Scan(ctx context.Context, r client.Range, opts ...client.ReadOption) iter.Seq2[client.Row, error] {
	if s.buckets != nil {
		return s.Source.Scan(ctx, r, append(opts[:len(opts):len(opts)], s.buckets)...)
	}
	return func(yield func(client.Row, error) bool) {
		for row, err := range s.Source.Scan(ctx, r, opts...) {
			if err == nil && !s.keep(row.Key) {
				continue
			}
			if !yield(row, err) {
				return
			}
		}
	}
}
