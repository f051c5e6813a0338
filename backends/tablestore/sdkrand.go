package tablestore

import (
	"math/rand" // the SDK's field is a math/rand *Rand
	"reflect"
	"sync"
	"time"
	"unsafe"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// lockedSource is a math/rand source safe for concurrent use.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source64
}

func (s *lockedSource) Int63() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Int63()
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

func (s *lockedSource) Seed(seed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src.Seed(seed)
}

// guardRetryJitter makes the SDK client's retry pauses safe for concurrent requests. The SDK (v4.1.3)
// draws every retry pause from one unlocked *rand.Rand per client (TableStoreClient.random), so two
// requests retrying at once race on it, which can corrupt the generator's state and panic; brine's
// scans and batches retry concurrently whenever the service is busy. The field is unexported, hence
// reflect and unsafe; if a later SDK renames or retypes it, the client is left as it is.
func guardRetryJitter(c *ots.TableStoreClient) {
	if c == nil {
		return
	}
	f := reflect.ValueOf(c).Elem().FieldByName("random")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*rand.Rand]() || !f.CanAddr() {
		return
	}
	p := (**rand.Rand)(unsafe.Pointer(f.UnsafeAddr()))
	if r := *p; r != nil {
		// Already guarded (the client was given to New before): writing again could race with its use.
		if src := reflect.ValueOf(r).Elem().FieldByName("src"); src.IsValid() && src.Kind() == reflect.Interface &&
			!src.IsNil() && src.Elem().Type() == reflect.TypeFor[*lockedSource]() {
			return
		}
	}
	*p = rand.New(&lockedSource{src: rand.NewSource(time.Now().UnixNano()).(rand.Source64)})
}
