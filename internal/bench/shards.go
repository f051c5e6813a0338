package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/salting"
)

// shardCount is how many shards the shards section's copy runs in.
const shardCount = 2

// ShardsResult is migrate.Copy of BulkRows rows, re-salted from copyFrom to copyTo, by Shards shards
// at once (Options.Shard i/Shards, each from a client of its own) against one unsharded copy of the
// same table (medians over the repeats). The shards are goroutines of this process standing in for
// processes of their own: each has its own client and, where the store allows it, its own
// connection; they share this process's Go runtime and its cores. The time of each is from the
// first call's start to the last one's end, into a fresh target that the copy creates, so it
// includes creating it and each shard's checkpoint. No goal holds it: on a machine of 2 cores that
// the store shares, it shows what splitting costs, not a speed-up.
type ShardsResult struct {
	Rows   int    `json:"rows_per_repeat"`
	From   string `json:"from"`
	To     string `json:"to"`
	Shards int    `json:"shards"`
	Cores  int    `json:"cores"` // runtime.NumCPU of this process
	// Connections is what each shard's client runs over: "separate" (a connection of its own, as a
	// process of its own would open) or "shared" (the run's backend: an embedded store is one
	// process's alone).
	Connections string `json:"connections"`

	OneMs           float64 `json:"one_process_ms"`
	ShardedMs       float64 `json:"sharded_ms"`
	OneRowsPerS     float64 `json:"one_process_rows_per_s"`
	ShardedRowsPerS float64 `json:"sharded_rows_per_s"`
	ShardedOverOne  float64 `json:"sharded_over_one_process"` // of rows/s: above 1, the shards were faster
	// The reading and writing alone, from the first progress report (the checkpoints read) to the
	// last bucket done: what is left once the fixed costs are out.
	OneCopyRowsPerS     float64 `json:"one_process_copy_rows_per_s"`
	ShardedCopyRowsPerS float64 `json:"sharded_copy_rows_per_s"`

	OneCPU     CPUUse `json:"one_process_cpu"`
	ShardedCPU CPUUse `json:"sharded_cpu"`
	// OneServerCPU and ShardedServerCPU are the CPU the store's server processes spent per row, in
	// µs (medians; only with Config.ServerPIDs).
	OneServerCPU     float64 `json:"one_process_server_cpu_us_per_row,omitempty"`
	ShardedServerCPU float64 `json:"sharded_server_cpu_us_per_row,omitempty"`
}

// shards loads a copyFrom table with BulkRows rows, then times, per repeat in turns, one unsharded
// copy of it into a fresh copyTo table and shardCount sharded copies at once into another.
func (r *runner) shards(ctx context.Context) (err error) {
	n := r.cfg.bulkRows()
	from, err := salting.ParseSpec(copyFrom)
	if err != nil {
		return err
	}
	to, err := salting.ParseSpec(copyTo)
	if err != nil {
		return err
	}
	stamp := time.Now().UnixMilli()
	src, err := r.createIn(ctx, r.client, "shardsrc", from)
	if err != nil {
		return err
	}
	if _, err := r.importN(ctx, src, n, func(i int) client.Mutation {
		return client.Mutation{Key: Key(i), Cells: []client.Cell{{Family: family, Qualifier: qualifier, Value: r.value, Timestamp: stamp}}}
	}); err != nil {
		return err
	}
	clients, conns, err := r.shardClients(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if conns != "separate" {
			return // the run's backend, closed by the caller
		}
		for _, c := range clients {
			err = errors.Join(err, c.Close())
		}
	}()
	r.log.Info("bench: sharded copy vs one process", "rows", n, "shards", shardCount, "connections", conns)
	var whole, rows [2][]float64
	var cpus [2][]CPUUse
	var serverCPU [2][]float64
	for rep := range r.cfg.Repeat {
		for j := range 2 {
			m := (j + rep) % 2 // 0: one process, 1: the shards
			cs := clients[:1]
			if m == 1 {
				cs = clients
			}
			name := TablePrefix + "sharddst" + strconv.Itoa(len(cs)) + "x" + strconv.Itoa(rep) + "_" + r.suffix
			r.viaClient = append(r.viaClient, name)
			r.settle(ctx)
			w, err := r.window()
			if err != nil {
				return err
			}
			copied, err := shardedCopy(ctx, cs, src.Name(), name, to, n)
			if err != nil {
				return err
			}
			whole[m] = append(whole[m], msSince(w.began))
			rows[m] = append(rows[m], RowsPerSecond(int64(n), copied))
			if err := w.close(r, n, &cpus[m], &serverCPU[m]); err != nil {
				return err
			}
			r.log.Info("bench: copy", "repeat", rep+1, "processes", len(cs), "ms", whole[m][len(whole[m])-1])
		}
	}
	res := &ShardsResult{Rows: n, From: copyFrom, To: copyTo, Shards: shardCount, Cores: runtime.NumCPU(), Connections: conns,
		OneMs: Median(whole[0]), ShardedMs: Median(whole[1]), OneCopyRowsPerS: Median(rows[0]), ShardedCopyRowsPerS: Median(rows[1]),
		OneCPU: medianUse(cpus[0]), ShardedCPU: medianUse(cpus[1])}
	res.OneRowsPerS = Ratio(float64(n), res.OneMs/1000)
	res.ShardedRowsPerS = Ratio(float64(n), res.ShardedMs/1000)
	res.ShardedOverOne = Ratio(res.ShardedRowsPerS, res.OneRowsPerS)
	if len(r.cfg.ServerPIDs) > 0 {
		res.OneServerCPU, res.ShardedServerCPU = Median(serverCPU[0]), Median(serverCPU[1])
	}
	r.rep.Shards = res
	return nil
}

// shardClients are shardCount clients, one per shard (the first also copies alone): each over a
// connection of its own where the store can open more (Store.Connect), else over the run's
// backend; conns says which ("separate" or "shared").
func (r *runner) shardClients(ctx context.Context) (_ []*client.Client, conns string, err error) {
	opts := append([]client.Option{client.WithLogger(r.log)}, r.cfg.ClientOptions...)
	clients := make([]*client.Client, shardCount)
	if r.store.Connect == nil {
		for i := range clients {
			clients[i] = client.New(r.count, opts...)
		}
		return clients, "shared", nil
	}
	for i := range clients {
		b, err := r.store.Connect(ctx)
		if err != nil {
			for _, c := range clients[:i] {
				_ = c.Close()
			}
			return nil, "", fmt.Errorf("bench: another connection to the store: %w", err)
		}
		clients[i] = client.New(b, opts...)
	}
	return clients, "separate", nil
}

// shardedCopy copies table into a new table as, with spec s, by one unsharded migrate.Copy per
// client when there is one, else by shard i of len(cs) from cs[i], all at once, and returns how
// long their reading and writing took: from the first progress report to the last bucket done.
func shardedCopy(ctx context.Context, cs []*client.Client, table, as string, s salting.Salter, n int) (time.Duration, error) {
	var mu sync.Mutex
	var first, last time.Time
	progress := func(p migrate.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = time.Now() // a checkpoint read, before the first row
		}
		if p.Buckets == p.Total {
			last = time.Now()
		}
	}
	stats := make([]migrate.Stats, len(cs))
	g, gctx := errgroup.WithContext(ctx)
	for i, c := range cs {
		opts := migrate.Options{As: as, Salter: s, Progress: progress}
		if len(cs) > 1 {
			opts.Shard = compare.Shard{Index: i, Count: len(cs)}
		}
		g.Go(func() error {
			st, err := migrate.Copy(gctx, c, c, table, opts)
			if err != nil {
				return fmt.Errorf("bench: copy %s to %s, %d at once: %w", table, as, len(cs), err)
			}
			stats[i] = st
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	var rows int64
	for _, st := range stats {
		rows += st.Rows
	}
	if rows != int64(n) {
		return 0, fmt.Errorf("bench: copy %s to %s in %d: %d of %d rows", table, as, len(cs), rows, n)
	}
	return last.Sub(first), nil
}

func (s *ShardsResult) markdown(p func(format string, args ...any)) {
	p("## Shards: a copy of %d rows from %s to %s by %d shards at once vs by one process\n\n", s.Rows, s.From, s.To, s.Shards)
	p("| copy | ms | rows/s | over one process | its reading and writing, rows/s | machine CPU µs/row | of it, this process | machine busy |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	p("| one process, unsharded (`brine copy`) | %.1f | %.0f | 1.00x | %.0f | %s |\n", s.OneMs, s.OneRowsPerS, s.OneCopyRowsPerS, s.OneCPU.cell())
	p("| %d shards at once (`brine copy --shard I/%d`) | %.1f | %.0f | %.2fx | %.0f | %s |\n\n", s.Shards, s.Shards, s.ShardedMs, s.ShardedRowsPerS, s.ShardedOverOne, s.ShardedCopyRowsPerS, s.ShardedCPU.cell())
	conns := "each over a connection of its own to the store"
	if s.Connections != "separate" {
		conns = "all over this process's one backend (an embedded store is one process's)"
	}
	p("Each shard is a `migrate.Copy` with `Options.Shard` from a client of its own, %s: goroutines of this process standing in for processes of their own, started together. Times run from the first start to the last end, into a fresh target each copy creates, with each shard's checkpoint. This machine has %d cores, which the store shares: shards show what splitting costs here, not the speed-up of shards on machines of their own.\n\n", conns, s.Cores)
	if s.OneServerCPU > 0 {
		p("The server processes spent %.1f µs of CPU per row on the copy by one process and %.1f µs on the shards' (%.2fx).\n\n",
			s.OneServerCPU, s.ShardedServerCPU, Ratio(s.ShardedServerCPU, s.OneServerCPU))
	}
}
