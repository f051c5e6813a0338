package salting

import (
	"encoding/binary"
	"testing"

	"github.com/brine-kv/brine/keys"
)

// benchCases pairs each strategy with a realistic key for it.
func benchCases(tb testing.TB) []struct {
	spec string
	key  []byte
} {
	sch, err := keys.ParseSchema("user,order:uint64,ts:int64:desc")
	if err != nil {
		tb.Fatal(err)
	}
	enc, err := sch.Encode("user-000042", uint64(900017), int64(1700000000000))
	if err != nil {
		tb.Fatal(err)
	}
	plain := []byte("user-000042/order-0000900017/2023-11-14T22:13:20")
	ts := binary.BigEndian.AppendUint64(nil, 1700000000000)
	ts = append(ts, "web-17/cpu.user"...)
	tsdb := []byte{0, 0, 1, 0x65, 0x53, 0xf1, 0x00, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4}
	return []struct {
		spec string
		key  []byte
	}{
		{"hash:16", plain},
		{"hash:1024", plain},
		{"hash:16:prefix=11", plain},
		{"hash:16:fields=1", enc},
		{"hash:16:sep=0x2f", plain},
		{"md5hex:4", plain},
		{"md5hex:4:prefix=11", plain},
		{"md5hex:2:fields=1", enc},
		{"mod:16:offset=0,width=8", ts},
		{"mod:16:field=k2", enc},
		{"reverse", plain},
		{"reverse:prefix=11", plain},
		{"reverse:fields=1", enc},
		{"phoenix:16", plain},
		{"opentsdb:20:width=1", tsdb},
		{"none", plain},
	}
}

func BenchmarkSalters(b *testing.B) {
	for _, bc := range benchCases(b) {
		s := mustParse(b, bc.spec)
		phys := physical(b, s, bc.key)
		dst := make([]byte, 0, 256)
		b.Run(bc.spec+"/AppendPhysical", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.AppendPhysical(dst[:0], bc.key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.spec+"/AppendLogical", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.AppendLogical(dst[:0], phys); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.spec+"/Bucket", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Bucket(bc.key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The hot path must not allocate when dst has room: assert it, not only report it.
func TestZeroAllocs(t *testing.T) {
	for _, bc := range benchCases(t) {
		s := mustParse(t, bc.spec)
		phys := physical(t, s, bc.key)
		dst := make([]byte, 0, 256)
		for name, fn := range map[string]func(){
			"AppendPhysical": func() { _, _ = s.AppendPhysical(dst[:0], bc.key) },
			"AppendLogical":  func() { _, _ = s.AppendLogical(dst[:0], phys) },
			"Bucket":         func() { _, _ = s.Bucket(bc.key) },
		} {
			if n := testing.AllocsPerRun(100, fn); n != 0 {
				t.Errorf("%s %s: %.1f allocs/op", bc.spec, name, n)
			}
		}
	}
}
