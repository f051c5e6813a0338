package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brine-kv/brine/backends"
)

// gets reads the same sample of keys raw (unsalted table) and through brine (salted table),
// alternating which side goes first, and counts what one salted Get costs below the client.
func (r *runner) gets(ctx context.Context, rng *rand.Rand) error {
	cfg := r.cfg
	keys := make([][]byte, cfg.Gets)
	for i := range keys {
		keys[i] = Key(rng.IntN(cfg.Rows))
	}
	rawGet := func(k []byte) (time.Duration, error) {
		began := time.Now()
		found, err := r.store.Raw.Get(ctx, r.plain, k)
		el := time.Since(began)
		if err == nil && !found {
			err = fmt.Errorf("bench: raw get %x: row not found", k)
		}
		return el, err
	}
	brineGet := func(k []byte) (time.Duration, error) {
		began := time.Now()
		_, err := r.salted.Get(ctx, k)
		return time.Since(began), err
	}
	r.log.Info("bench: point gets", "keys", len(keys))
	for _, k := range keys[:min(len(keys), 100)] { // warm-up: connections, region caches
		if _, err := rawGet(k); err != nil {
			return err
		}
		if _, err := brineGet(k); err != nil {
			return err
		}
	}
	// The third side is brine's own driver on the unsalted table, no client: it tells the cost of the
	// driver apart from the cost of salting. The fourth is raw again, on the salted table with the
	// physical keys: a salted table spreads the rows over many regions, which costs the server
	// something on its own; brine against this side is what the client adds.
	driverGet := func(k []byte) (time.Duration, error) {
		began := time.Now()
		rows, err := r.store.Backend.Read(ctx, r.plain, [][]byte{k}, backends.ReadOptions{})
		el := time.Since(began)
		if err == nil && (len(rows) != 1 || len(rows[0].Cells) == 0) {
			err = fmt.Errorf("bench: driver get %x: row not found", k)
		}
		return el, err
	}
	phys := make([][]byte, len(keys))
	for i, k := range keys {
		pk, err := r.salted.Salter().AppendPhysical(nil, k)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		phys[i] = pk
	}
	rawSaltedGet := func(i int) (time.Duration, error) {
		began := time.Now()
		found, err := r.store.Raw.Get(ctx, r.salted.Name(), phys[i])
		el := time.Since(began)
		if err == nil && !found {
			err = fmt.Errorf("bench: raw get %x: row not found", phys[i])
		}
		return el, err
	}
	const sides = 4
	var p50s, p99s [sides][]time.Duration
	var brineCounts counts
	var brineWire int64
	for rep := range cfg.Repeat {
		var lat [sides][]time.Duration
		for i, k := range keys {
			for step := range sides {
				// Rotate which side reads first, so none always follows another's cache warming.
				side := (i + rep + step) % sides
				var el time.Duration
				var err error
				switch side {
				case 0:
					el, err = rawGet(k)
				case 1:
					before, wire := r.count.snapshot(), r.wireCalls()
					el, err = brineGet(k)
					d := r.count.snapshot().sub(before)
					brineCounts.reads += d.reads
					brineCounts.readKeys += d.readKeys
					brineCounts.dirReads += d.dirReads
					// A directory read is one Get RPC of the driver's (readDir reads one key).
					brineWire += r.wireCalls() - wire - d.dirReads
				case 2:
					el, err = driverGet(k)
				case 3:
					el, err = rawSaltedGet(i)
				}
				if err != nil {
					return fmt.Errorf("bench: %w", err)
				}
				lat[side] = append(lat[side], el)
			}
		}
		for side := range lat {
			p50s[side] = append(p50s[side], Percentile(lat[side], 50))
			p99s[side] = append(p99s[side], Percentile(lat[side], 99))
		}
	}
	n := float64(cfg.Repeat * len(keys))
	g := &GetResult{
		Gets:        len(keys),
		RawP50us:    us(MedianDuration(p50s[0])),
		RawP99us:    us(MedianDuration(p99s[0])),
		BrineP50us:  us(MedianDuration(p50s[1])),
		BrineP99us:  us(MedianDuration(p99s[1])),
		DriverP50us: us(MedianDuration(p50s[2])),
		DriverP99us: us(MedianDuration(p99s[2])),

		RawSaltedP50us: us(MedianDuration(p50s[3])),
		RawSaltedP99us: us(MedianDuration(p99s[3])),

		BackendReadsPerGet: float64(brineCounts.reads) / n,
		BackendKeysPerGet:  float64(brineCounts.readKeys) / n,
		DriverRPCsPerGet:   -1,
		DirReadsPerGet:     float64(brineCounts.dirReads) / n,
	}
	if r.store.Wire != nil {
		g.DriverRPCsPerGet = float64(brineWire) / n
	}
	g.P50Ratio = Ratio(g.BrineP50us, g.RawP50us)
	g.P99Ratio = Ratio(g.BrineP99us, g.RawP99us)
	g.ClientP50Ratio = Ratio(g.BrineP50us, g.RawSaltedP50us)
	r.rep.Get = g
	return nil
}

func (r *runner) wireCalls() int64 {
	if r.store.Wire == nil {
		return 0
	}
	return r.store.Wire.Calls()
}

func (r *runner) wireScanRows() int64 {
	if r.store.Wire == nil {
		return -1
	}
	return r.store.Wire.ScanRows()
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
