package keys

import "testing"

func BenchmarkSchema(b *testing.B) {
	s := mustSchema(b, "host,event,ts:int64:desc")
	key := mustEncode(b, s, "web-017.example", "cpu.user", int64(1700000000000))
	dst := make([]byte, 0, 128)
	b.Run("Append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Append(dst[:0], "web-017.example", "cpu.user", int64(1700000000000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Decode(key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FieldsLen2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := FieldsLen(key, 2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendReversedFields1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendReversedFields(dst[:0], key, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}
