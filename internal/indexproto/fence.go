package indexproto

import (
	"strconv"
	"strings"
	"time"
)

// Fence is the table meta's record of an exclusive bulk job's write fence (client.ExclusiveTable),
// under FenceKey as "TOKEN EXPIRES_MS HOLDER"; FenceIndexesKey holds the indexes the fence moved
// from active to building (comma-separated), which its release makes active again.
type Fence struct {
	Token   string
	Expires time.Time
	Holder  string
}

// The fence's meta keys.
const (
	FenceKey        = "brine.fence"
	FenceIndexesKey = "brine.fence.indexes"
)

// ParseFence reads the fence of a table's meta; ok is false when it records none.
func ParseFence(meta map[string]string) (f Fence, ok bool) {
	v, ok := meta[FenceKey]
	if !ok {
		return Fence{}, false
	}
	tok, rest, _ := strings.Cut(v, " ")
	exp, holder, _ := strings.Cut(rest, " ")
	ms, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		ms = 0 // unreadable: expired, so that it cannot fence a table for ever
	}
	return Fence{Token: tok, Expires: time.UnixMilli(ms), Holder: holder}, true
}

// String is the fence as the meta holds it.
func (f Fence) String() string {
	return f.Token + " " + strconv.FormatInt(f.Expires.UnixMilli(), 10) + " " + f.Holder
}

// Live reports whether f fences writers now: it is set and its lease has not run out.
func (f Fence) Live() bool { return f.Token != "" && time.Now().Before(f.Expires) }
