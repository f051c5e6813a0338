package indexproto

import (
	"crypto/rand"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/brine-kv/brine/backends"
)

// NewToken is a write's identity: its start time in ms (how readers age a pending entry), then 8
// random bytes, so that no two writes share one and a compare-and-set on it never meets an ABA.
func NewToken() []byte { return appendToken(make([]byte, 0, 16)) }

// appendToken appends a new token to dst.
func appendToken(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(time.Now().UnixMilli()))
	var r [8]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	return append(dst, r[:]...)
}

// TokenAge is how long ago the write of token started (0 for a malformed token: never repaired as
// dead on its age alone).
func TokenAge(tok []byte) time.Duration {
	if len(tok) != 16 {
		return 0
	}
	return time.Since(time.UnixMilli(int64(binary.BigEndian.Uint64(tok))))
}

// Status is an entry status: kind (StatusVerified, StatusPending) and the token behind it.
func Status(kind byte, tok []byte) []byte { return append([]byte{kind}, tok...) }

// NewStatus is a NewToken and the Status of kind behind it, in one allocation: tok is status[1:].
// A bulk job writes both, the token as the row's version and the status in its entries.
func NewStatus(kind byte) (tok, status []byte) {
	status = appendToken(append(make([]byte, 0, 17), kind))
	return status[1:], status
}

// MergeCells is the row after m (nil for a row delete): per column, the newest of m's cell and the
// row's, as the store keeps them. A cell stamped by the server (0) or at least as new as the row's
// replaces it; an older explicit stamp (a repeated key in an import, its first occurrence landing
// last) leaves the row's value newest, so the index follows what reads will see.
func MergeCells(old []backends.Cell, m backends.Mutation) []backends.Cell {
	if m.Delete {
		return nil
	}
	if len(old) == 0 {
		return m.Cells // a new row: most of a first load's
	}
	var out []backends.Cell
	for _, c := range m.Cells {
		i := slices.IndexFunc(old, func(o backends.Cell) bool { return o.Family == c.Family && o.Qualifier == c.Qualifier })
		if c.Timestamp != 0 && i >= 0 && old[i].Timestamp > c.Timestamp {
			continue
		}
		out = append(out, c)
	}
	for _, c := range old {
		if c.Qualifier == VersionQualifier {
			continue
		}
		if _, written := Newest(out, backends.Column{Family: c.Family, Qualifier: c.Qualifier}); !written {
			out = append(out, c)
		}
	}
	return out
}

// VersionMark starts a row version left by a column delete in flight (+ its token).
const VersionMark = 'd'

// Marked reports whether a row version is a column delete's mark whose writer may still be running
// (younger than grace): a conditional write of the row waits it out.
func Marked(v []byte, grace time.Duration) bool {
	return len(v) > 0 && v[0] == VersionMark && TokenAge(v[1:]) < grace
}

// Claims are the unique entries an exclusive holder has written, by 128-bit hashes of the index
// and entry key (to the main key's): two rows of one job claiming one key cannot both land.
type Claims struct {
	mu     sync.Mutex
	s1, s2 maphash.Seed
	m      map[[2]uint64][2]uint64
}

func (cs *Claims) sums(parts ...[]byte) (k, v [2]uint64) {
	if cs.m == nil {
		cs.s1, cs.s2, cs.m = maphash.MakeSeed(), maphash.MakeSeed(), map[[2]uint64][2]uint64{}
	}
	var h1, h2 maphash.Hash
	h1.SetSeed(cs.s1)
	h2.SetSeed(cs.s2)
	for _, p := range parts[:2] {
		_, _ = h1.Write(p)
		_, _ = h2.Write(p)
		_ = h1.WriteByte(0)
		_ = h2.WriteByte(0)
	}
	return [2]uint64{h1.Sum64(), h2.Sum64()}, [2]uint64{maphash.Bytes(cs.s1, parts[2]), maphash.Bytes(cs.s2, parts[2])}
}

// Claim records that mainKey holds index's entry key; false when another row holds it.
func (cs *Claims) Claim(index string, key, mainKey []byte) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k, v := cs.sums([]byte(index), key, mainKey)
	if got, ok := cs.m[k]; ok {
		return got == v
	}
	cs.m[k] = v
	return true
}

// Release forgets mainKey's claim of index's entry key.
func (cs *Claims) Release(index string, key, mainKey []byte) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k, v := cs.sums([]byte(index), key, mainKey)
	if cs.m[k] == v {
		delete(cs.m, k)
	}
}
