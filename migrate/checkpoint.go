package migrate

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/salting"
)

// plan checks a copy's input against both stores and opens its source; nothing is written yet.
func plan(ctx context.Context, from, to *client.Client, table string, opts Options) (*job, error) {
	if opts.As == "" {
		opts.As = table
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Since.After(time.Now()) {
		return nil, fmt.Errorf("copy %s: %w: since %s is in the future: no cell is stamped after it yet",
			table, client.ErrInvalidArgument, opts.Since.UTC().Format(time.RFC3339))
	}
	if opts.ChunkRows <= 0 {
		opts.ChunkRows = 8000
	}
	j := &job{from: from, to: to, table: table, as: opts.As, opts: opts, asked: opts.Range}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("copy %s: "+format, append([]any{table}, args...)...)
	}
	if err := opts.Shard.Check(); err != nil {
		return nil, fail("shard %s: %w", opts.Shard, err)
	}
	if main, ix, err := from.IndexTableOf(ctx, table); err != nil {
		return nil, fail("%w", err)
	} else if main != "" {
		return nil, fail("%w: it is index %s's table; copy table %s, whose copy gets the index built", client.ErrInvalidArgument, ix, main)
	}
	cfg, err := from.Describe(ctx, table)
	if err != nil {
		return nil, fail("%w", err)
	}
	if cfg.Salter == nil {
		return nil, fail("%w: brine did not create it (no salting spec stored): its salt and families are unknown", client.ErrInvalidArgument)
	}
	j.cfg = cfg
	if opts.Salter != nil {
		// Checked before the checkpoint or the target is made: a salting that cannot place the
		// source's keys fails every row, and one whose table cannot be scanned cannot be verified.
		if err := salting.CheckSchema(opts.Salter, cfg.KeySchema); err != nil {
			return nil, fail("%w: %w", client.ErrInvalidArgument, err)
		}
		if err := salting.CheckScannable(opts.Salter); err != nil {
			return nil, fail("%w: %w", client.ErrInvalidArgument, err)
		}
	}
	src, err := from.OpenTable(ctx, table, nil)
	if err != nil {
		return nil, fail("%w", err)
	}
	j.src = src
	salter := src.Salter()
	part, r, ok := shardPart(salter.Buckets(), opts)
	if !ok {
		part.Buckets = nil // the shard holds no key of the range: nothing to read
	}
	j.part, j.buckets, j.opts.Range = part, len(part.Buckets), r
	if err := j.checkTarget(ctx); err != nil {
		return nil, fail("%w", err)
	}
	if opts.Shard.Sharded() && len(cfg.Indexes) > 0 && j.absent {
		return nil, fail("%w: shard %s: an indexed table's copy is written under one exclusive fence, which one process holds "+
			"and whose release builds the indexes once every row is in: copy it without a shard, or create the target "+
			"with its indexes first (a copy into a target that is there writes through its indexes, and may be sharded)",
			client.ErrInvalidArgument, opts.Shard)
	}
	return j, nil
}

// checkTarget checks what the target store holds under the target's name: nothing, or a table the
// rows can go into.
func (j *job) checkTarget(ctx context.Context) error {
	tcfg, err := j.describeTarget(ctx)
	switch {
	case errors.Is(err, client.ErrTableNotFound):
		j.absent = true
		return nil
	case err != nil:
		return fmt.Errorf("target %s: %w", j.as, err)
	}
	if got, want := schemaText(tcfg), schemaText(j.cfg); got != want {
		return fmt.Errorf("%w: target %s exists with key schema %s, the source's is %s", client.ErrInvalidArgument, j.as, got, want)
	}
	if j.opts.Salter != nil && (tcfg.Salter == nil || tcfg.Salter.Spec() != j.opts.Salter.Spec()) {
		return fmt.Errorf("%w: target %s exists with salting %s, not %s", client.ErrSpecMismatch, j.as, specText(tcfg.Salter), j.opts.Salter.Spec())
	}
	if tcfg.Families != nil {
		for _, f := range j.cfg.Families {
			if !slices.Contains(tcfg.Families, f) {
				return fmt.Errorf("%w: target %s has no family %q (it has %s)", client.ErrInvalidArgument, j.as, f, strings.Join(tcfg.Families, ", "))
			}
		}
	}
	return nil
}

// start checks the checkpoint (a resume needs the interrupted copy's, with these options; a new
// copy needs none), makes a new one, then opens the target, creating it if needed: a copy the
// target store refuses (a name, a family it cannot hold) fails before any row is written, and
// drops the checkpoint it made.
func (j *job) start(ctx context.Context) error {
	cp, err := j.openCheckpoint(ctx)
	if err != nil {
		return fmt.Errorf("copy %s: %w", j.table, err)
	}
	fresh := cp == nil
	if fresh {
		// Before the target: a copy killed at any point after it has a checkpoint to resume, and
		// a target it created and fenced is never left without one.
		if cp, err = j.newCheckpoint(ctx, ShardCheckpoint(CheckpointTable(j.as), j.opts.Shard)); err != nil {
			return err
		}
	}
	if err := j.openTarget(ctx); err != nil {
		if fresh {
			if derr := j.to.DeleteTable(context.WithoutCancel(ctx), cp.Name()); derr != nil && !errors.Is(derr, client.ErrTableNotFound) {
				err = errors.Join(err, fmt.Errorf("copy %s: drop its checkpoint: %w", j.table, derr))
			}
		}
		return err
	}
	j.cp = cp
	return nil
}

// Interrupted reports whether to's store holds checkpoint (CheckpointTable or SyncCheckpointTable
// of a target; of shard, when sharded): whether the copy or sync that keeps it was interrupted, and
// is to be run with Resume. A job runner's retry, which runs the first try's command again, asks it
// first (brine's --resume=auto).
func Interrupted(ctx context.Context, to *client.Client, checkpoint string, shard compare.Shard) (bool, error) {
	name := ShardCheckpoint(checkpoint, shard)
	_, err := to.OpenTable(ctx, name, nil)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, client.ErrTableNotFound):
		return false, nil
	}
	return false, fmt.Errorf("look for the checkpoint %s: %w", name, err)
}

// openCheckpoint returns the interrupted copy's checkpoint when resuming (its options must be
// these), and nil for a new copy, which finds none there.
func (j *job) openCheckpoint(ctx context.Context) (*client.Table, error) {
	if err := checkShardCheckpoints(ctx, j.to, "copy", CheckpointTable(j.as), j.opts.Shard, j.opts.Resume); err != nil {
		return nil, err
	}
	name := ShardCheckpoint(CheckpointTable(j.as), j.opts.Shard)
	cp, err := j.to.OpenTable(ctx, name, nil)
	switch {
	case err == nil && !j.opts.Resume:
		return nil, fmt.Errorf("%w: %s holds its checkpoint; resume it (--resume), or drop that table to start again", ErrInterrupted, name)
	case err == nil:
		got, err := cp.Get(ctx, []byte(jobKey))
		if err != nil && !errors.Is(err, client.ErrNotFound) {
			return nil, fmt.Errorf("read the checkpoint: %w", err)
		}
		if have, want := storedFingerprint(string(cellValue(got.Cells, qualOptions))), j.fingerprint(); have != want {
			return nil, fmt.Errorf("%w: the checkpoint was made with %s; this resume has %s", ErrResumeMismatch, j.showOptions(have), j.showOptions(want))
		}
		j.firstRun = time.Time{} // unknown, unless the checkpoint recorded it
		if v := cellValue(got.Cells, qualBegan); len(v) == 8 {
			j.firstRun = time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
		}
		return cp, nil
	case errors.Is(err, client.ErrTableNotFound) && j.opts.Resume:
		return nil, fmt.Errorf("%w: no checkpoint %s on the target's store: nothing to resume", client.ErrInvalidArgument, name)
	case errors.Is(err, client.ErrTableNotFound):
		return nil, nil
	}
	return nil, fmt.Errorf("open the checkpoint: %w", err)
}

// newCheckpoint creates the checkpoint table, with the options a resume must have.
func (j *job) newCheckpoint(ctx context.Context, name string) (*client.Table, error) {
	began := binary.BigEndian.AppendUint64(nil, uint64(j.firstRun.UnixMilli()))
	cp, err := j.createCheckpoint(ctx, name,
		client.Cell{Family: client.DefaultFamily, Qualifier: qualOptions, Value: []byte(j.fingerprint())},
		client.Cell{Family: client.DefaultFamily, Qualifier: qualBegan, Value: began})
	if err != nil {
		return nil, fmt.Errorf("copy %s: %w", j.table, err)
	}
	return cp, nil
}

// createCheckpoint creates a copy's or a sync's checkpoint table name on the target's store, its
// job row holding cells (the options a resume must have).
func (j *job) createCheckpoint(ctx context.Context, name string, cells ...client.Cell) (*client.Table, error) {
	none, err := salting.ParseSpec("none")
	if err != nil {
		return nil, err
	}
	cp, err := j.to.CreateTable(ctx, name, client.TableConfig{Salter: none})
	if err != nil {
		return nil, fmt.Errorf("create the checkpoint: %w", err)
	}
	if err := cp.Put(ctx, []byte(jobKey), cells...); err != nil {
		return nil, fmt.Errorf("write the checkpoint: %w", err)
	}
	return cp, nil
}

// openTarget opens the target, created like the source if it is not there. A target with indexes
// that this copy creates, or resumes, is written under an exclusive fence: rows and index entries as
// plain batches, made exact and active by the fence's release (finish). An indexed target that was
// there already (a catch-up) is written through its per-row protocol, as any writer's.
func (j *job) openTarget(ctx context.Context) error {
	cfg := j.cfg
	if j.opts.Salter != nil {
		cfg.Salter = j.opts.Salter
	}
	if cfg.Families == nil {
		if _, err := j.to.Describe(ctx, j.as); errors.Is(err, client.ErrTableNotFound) {
			return fmt.Errorf("copy %s: %w: its families were not recorded (it was created before brine recorded them): create %s on the target with them, then copy into it",
				j.table, client.ErrInvalidArgument, j.as)
		}
	}
	t, err := j.to.CreateTable(ctx, j.as, cfg)
	switch {
	case err == nil && len(cfg.Indexes) > 0:
		j.created = true
		return j.fence(ctx, t, false)
	case err == nil:
		j.target, j.created = t, true
		return nil
	case !errors.Is(err, client.ErrTableExists):
		return fmt.Errorf("copy %s: create target %s: %w", j.table, j.as, err)
	}
	if j.absent { // another copy (a shard started at once) created it since plan looked
		if err := j.awaitTarget(ctx); err != nil {
			return err
		}
	}
	if t, err = j.to.OpenTable(ctx, j.as, nil); err != nil {
		return fmt.Errorf("copy %s: open target %s: %w", j.table, j.as, err)
	}
	if j.opts.Resume && len(j.cfg.Indexes) > 0 && len(t.Indexes()) > 0 && !j.opts.Shard.Sharded() {
		return j.fence(ctx, t, true) // the interrupted copy's fence, its holder gone
	}
	j.target = t
	return nil
}

// fence takes the target's exclusive fence (takeOver: from the interrupted copy) for the rows' writes.
func (j *job) fence(ctx context.Context, it *client.Table, takeOver bool) error {
	x, err := it.Exclusive(ctx, client.ExclusiveOptions{TakeOver: takeOver, Holder: "brine copy of " + j.table})
	if err != nil {
		return fmt.Errorf("copy %s: fence target %s: %w", j.table, j.as, err)
	}
	j.target, j.fenced = x, x
	return nil
}

const (
	jobKey      = "job"
	qualOptions = "options"
	qualCursor  = "cursor"
	qualDone    = "done"
	qualBegan   = "began" // the first run's start, ms since 1970, big-endian: a resume's catch-up time
)

// fingerprint is what a resume must agree with: every option that changes which rows go where.
func (j *job) fingerprint() string {
	spec := specText(j.cfg.Salter)
	if j.opts.Salter != nil {
		spec = j.opts.Salter.Spec()
	}
	since := "none"
	if !j.opts.Since.IsZero() {
		since = j.opts.Since.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	fp := fmt.Sprintf("table=%s as=%s salt=%s start=%x end=%x since=%s all-versions=%t",
		j.table, j.as, spec, j.asked.Start, j.asked.End, since, j.opts.AllVersions)
	if j.opts.Shard.Sharded() { // an unsharded checkpoint's words stay as they were
		fp += " shard=" + j.opts.Shard.String()
	}
	return fp
}

// storedFingerprint is a checkpoint's fingerprint with its salting spec as Salter.Spec spells it now,
// so that a copy an earlier brine checkpointed under another spelling of the same spec (mod:N:field=K)
// resumes. Nothing else in a fingerprint changed its spelling.
func storedFingerprint(fp string) string {
	words := strings.Split(fp, " ")
	for i, w := range words {
		if spec, ok := strings.CutPrefix(w, "salt="); ok {
			words[i] = "salt=" + salting.CanonicalSpec(spec)
		}
	}
	return strings.Join(words, " ")
}

// showOptions is a checkpoint's options (fingerprint) as a user reads them, the range's keys
// printed as get prints them. The stored form keeps them in hex, which is what resumes compare, so
// checkpoints already made still match.
func (j *job) showOptions(fp string) string {
	words := strings.Fields(fp)
	for i, w := range words {
		for _, name := range []string{"start=", "end="} {
			h, ok := strings.CutPrefix(w, name)
			if !ok {
				continue
			}
			if k, err := hex.DecodeString(h); err == nil && len(k) > 0 {
				words[i] = name + route.PrintKey(j.cfg.KeySchema, k)
			} else if err == nil {
				words[i] = name + "(none)"
			}
		}
	}
	return strings.Join(words, " ")
}

// bucketState is a source bucket's place in the checkpoint.
type bucketState struct {
	cursor []byte // the last row written, every row before it written too; nil: none yet
	done   bool
}

func bucketKey(b int) []byte { return fmt.Appendf(nil, "bucket/%06d", b) }

// readCheckpoint returns the state of each source bucket the copy reads, in j.part.Buckets' order.
func (j *job) readCheckpoint(ctx context.Context) ([]bucketState, error) {
	keys := make([][]byte, j.buckets)
	for i, b := range j.part.Buckets {
		keys[i] = bucketKey(b)
	}
	rows, err := j.cp.GetMany(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("copy %s: read the checkpoint: %w", j.table, err)
	}
	states := make([]bucketState, j.buckets)
	for b, r := range rows {
		states[b] = bucketState{cursor: cellValue(r.Cells, qualCursor), done: cellValue(r.Cells, qualDone) != nil}
	}
	return states, nil
}

// saveCursor records a bucket's cursor, or that it is done.
func (j *job) saveCursor(ctx context.Context, bucket int, cursor []byte, done bool) error {
	c := client.Cell{Family: client.DefaultFamily, Qualifier: qualCursor, Value: cursor}
	if done {
		c = client.Cell{Family: client.DefaultFamily, Qualifier: qualDone, Value: []byte{1}}
	}
	if err := j.cp.Put(ctx, bucketKey(bucket), c); err != nil {
		return fmt.Errorf("copy %s: bucket %d: save its cursor: %w", j.table, bucket, err)
	}
	return nil
}

func cellValue(cells []client.Cell, qual string) []byte {
	for _, c := range cells {
		if c.Qualifier == qual {
			return c.Value
		}
	}
	return nil
}

func schemaText(cfg client.TableConfig) string {
	if cfg.KeySchema == nil {
		return "none"
	}
	return cfg.KeySchema.String()
}

func specText(s salting.Salter) string {
	if s == nil {
		return "none stored"
	}
	return s.Spec()
}
