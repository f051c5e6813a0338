package client_test

import (
	"encoding/binary"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// BenchmarkGet prices what a salted Table.Get adds to the driver's own point read: on the memory
// store, where a read costs little, the difference is the client's CPU (salting, checks, copies).
// `go test -bench Get -benchmem -cpuprofile cpu.out ./client/` shows where it goes.
func BenchmarkGet(b *testing.B) {
	ctx := b.Context()
	store := memory.New()
	c := client.New(store)
	defer c.Close()
	none, salted := testkit.Salter(b, "none"), testkit.Salter(b, "hash:16")
	raw, err := c.CreateTable(ctx, "raw", client.TableConfig{Salter: none})
	if err != nil {
		b.Fatal(err)
	}
	t, err := c.CreateTable(ctx, "salted", client.TableConfig{Salter: salted})
	if err != nil {
		b.Fatal(err)
	}
	const n = 1024
	keys := make([][]byte, n)
	muts := make([]client.Mutation, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+i*10))
		muts[i] = client.Mutation{Key: keys[i], Cells: []client.Cell{testkit.Cell("q", "v")}}
	}
	for _, tab := range []*client.Table{raw, t} {
		if rowErrs, err := tab.Apply(ctx, muts); err != nil || rowErrs != nil {
			b.Fatal(err, rowErrs)
		}
	}
	b.Run("driver", func(b *testing.B) {
		var i int
		for b.Loop() {
			rows, err := store.Read(ctx, "raw", keys[i%n:i%n+1], backends.ReadOptions{})
			if err != nil || len(rows[0].Cells) == 0 {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("salted", func(b *testing.B) {
		var i int
		for b.Loop() {
			if _, err := t.Get(ctx, keys[i%n]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
