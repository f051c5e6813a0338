package migrate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/shardplan"
	"github.com/brine-kv/brine/internal/wait"
)

// ShardCheckpoint is the name of the checkpoint table of shard s of a copy or a sync, given the
// unsharded one's (CheckpointTable, SyncCheckpointTable): "orders__copy_shard1of3"; checkpoint
// itself for the zero Shard. Each shard has a table of its own, which it creates when it starts and
// drops when it is done, so that shards started at once on as many machines never write one table
// and need nothing to agree on who drops it. The name keeps to the letters, digits and underscores
// every store takes.
func ShardCheckpoint(checkpoint string, s compare.Shard) string {
	if !s.Sharded() {
		return checkpoint
	}
	return fmt.Sprintf("%s_shard%dof%d", checkpoint, s.Index, s.Count)
}

// checkpointShard reports whether name is a checkpoint of base (ShardCheckpoint's inverse), and
// whose.
func checkpointShard(base, name string) (compare.Shard, bool) {
	if name == base {
		return compare.Shard{}, true
	}
	rest, ok := strings.CutPrefix(name, base+"_shard")
	if !ok {
		return compare.Shard{}, false
	}
	var s compare.Shard
	if n, err := fmt.Sscanf(rest, "%dof%d", &s.Index, &s.Count); err != nil || n != 2 || ShardCheckpoint(base, s) != name || s.Check() != nil || !s.Sharded() {
		return compare.Shard{}, false
	}
	return s, true
}

// describeShards says how the job of a checkpoint ran, for errors.
func describeShards(s compare.Shard) string {
	if !s.Sharded() {
		return "in one process (no shard)"
	}
	return fmt.Sprintf("in %d shards", s.Count)
}

// checkShardCheckpoints refuses a job (verb: copy, sync) whose target holds a checkpoint of base
// from a job split otherwise than by s: an unsharded one's beside a shard's, or one of another
// shard count. The shards of one count are each other's siblings, running now or interrupted, and
// never in the way. A resume is refused with ErrResumeMismatch, a new job with ErrInterrupted,
// before either writes anything.
func checkShardCheckpoints(ctx context.Context, to *client.Client, verb, base string, s compare.Shard, resume bool) error {
	names, err := to.Tables(ctx)
	if err != nil {
		return fmt.Errorf("look for the checkpoints of %s: %w", base, err)
	}
	for _, name := range names {
		other, ok := checkpointShard(base, name)
		if !ok || other.Count == s.Count {
			continue
		}
		if resume {
			return fmt.Errorf("%w: the interrupted %s ran %s (its checkpoint %s); this resume runs %s: resume it as it ran",
				ErrResumeMismatch, verb, describeShards(other), name, describeShards(s))
		}
		return fmt.Errorf("%w: %s holds the checkpoint of a %s run %s; resume that (--resume, with its --shard), or drop its checkpoint tables to start again",
			ErrInterrupted, name, verb, describeShards(other))
	}
	return nil
}

// shardPart is the part of the source's buckets nb that a copy with opts reads, and the range it
// reads in them: the whole table and opts.Range without a shard. ok is false when the shard holds
// no key of the range.
func shardPart(nb int, opts Options) (p shardplan.Part, r client.Range, ok bool) {
	s := opts.Shard
	if !s.Sharded() {
		s = compare.Shard{Index: 0, Count: 1}
	}
	p = shardplan.Of(nb, s.Index, s.Count)
	r.Start, r.End, ok = p.Intersect(opts.Range.Start, opts.Range.End)
	return p, r, ok
}

// targetWait is how long a copy waits for a target another process is creating to be visible
// whole: on Tablestore, the table's meta row (its salting spec) follows the table.
const targetWait = 30 * time.Second

// describeTarget describes the target; one there without a salting spec is waited for, up to
// targetWait, as the creation of a shard started at the same time may not be whole yet (a table
// brine did not create keeps none, and is then refused as before, once the wait is over).
func (j *job) describeTarget(ctx context.Context) (client.TableConfig, error) {
	deadline := time.Now().Add(targetWait)
	for {
		cfg, err := j.to.Describe(ctx, j.as)
		if err != nil || cfg.Salter != nil || time.Now().After(deadline) {
			return cfg, err
		}
		if err := wait.Sleep(ctx, 50*time.Millisecond); err != nil {
			return cfg, err
		}
	}
}

// awaitTarget checks the target another copy created since plan found none there, as plan checks
// a target that was there: a shard started at the same time as others takes the target one of
// them created, if it is the one it would have made.
func (j *job) awaitTarget(ctx context.Context) error {
	if err := j.checkTarget(ctx); err != nil {
		return fmt.Errorf("copy %s: the target another copy created: %w", j.table, err)
	}
	return nil
}
