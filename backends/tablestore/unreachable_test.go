package tablestore

import (
	"errors"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenUnreachable: a store no one answers at is said to be unreachable, in brine's words, not as
// the HTTP client's `Post "http://127.0.0.1:1/ListTable": dial tcp ...`; the cause stays wrapped.
func TestOpenUnreachable(t *testing.T) {
	_, err := Open(t.Context(), Config{Endpoint: "http://127.0.0.1:1", Instance: "i", AccessKeyID: "id",
		AccessKeySecret: testSecret, SDKRetryTimes: -1, ConnectTimeout: time.Second})
	if err == nil {
		t.Fatal("Open of a port nothing listens on: no error")
	}
	msg := err.Error()
	for _, raw := range []string{"Post ", "dial tcp", "/ListTable", testSecret} {
		if strings.Contains(msg, raw) {
			t.Errorf("error %q holds %q", msg, raw)
		}
	}
	if !strings.Contains(msg, "the store at 127.0.0.1:1 could not be reached (connection refused)") {
		t.Errorf("error %q: want it to say the store at 127.0.0.1:1 could not be reached, and why", msg)
	}
	var ue *url.Error
	if !errors.As(err, &ue) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %q lost its cause", msg)
	}
}
