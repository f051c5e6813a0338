package tablestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

var (
	// ErrNotConfigured is returned by ConfigFromEnv when TABLESTORE_ENDPOINT is not set.
	ErrNotConfigured = errors.New("tablestore: not configured")
	// errClosed fails every method after Close.
	errClosed = fmt.Errorf("tablestore: %w", backends.ErrClosed)
)

// Error codes of the service (the SDK's own constants cover only those it retries).
const (
	codeNotExist       = "OTSObjectNotExist"
	codeAlreadyExist   = "OTSObjectAlreadyExist"
	codeParamInvalid   = "OTSParameterInvalid"
	codeInvalidPK      = "OTSInvalidPK"
	codeColumnLimit    = "OTSOutOfColumnCountLimit"
	codeRowSizeLimit   = "OTSOutOfRowSizeLimit"
	codeBodyTooLarge   = "OTSRequestBodyTooLarge"
	codeServerBusy     = ots.SERVER_BUSY
	codePartitionUnav  = ots.PARTITION_UNAVAILABLE
	codeQuota          = ots.QUOTA_EXHAUSTED
	codeConflict       = ots.ROW_OPERATION_CONFLICT
	codeNoCapacity     = ots.NOT_ENOUGH_CAPACITY_UNIT
	codeTableNotReady  = ots.TABLE_NOT_READY
	codeStorageBusy    = ots.STORAGE_SERVER_BUSY
	codeTimeout        = ots.STORAGE_TIMEOUT
	codeServerUnavail  = ots.SERVER_UNAVAILABLE
	codeInternalServer = ots.INTERNAL_SERVER_ERROR
	codeCUExhausted    = "OTSCapacityUnitExhausted"
	codeFlowControl    = "OTSFlowControl"
)

// retryableCode reports whether an operation that failed with code may be sent again as is. The
// timeout and internal-error codes leave the outcome unknown, so only idempotent operations qualify.
func retryableCode(code string, idempotent bool) bool {
	switch code {
	case codeServerBusy, codePartitionUnav, codeQuota, codeConflict, codeNoCapacity, codeTableNotReady, codeStorageBusy,
		codeCUExhausted, codeFlowControl:
		return true
	case codeTimeout, codeServerUnavail, codeInternalServer:
		return idempotent
	}
	return false
}

// mapError wraps an error of the SDK with what failed and the backends sentinel that matches its code;
// errors.As still finds the *ots.OtsError.
func mapError(what string, err error, idempotent bool) error {
	if err == nil {
		return nil
	}
	var oe *ots.OtsError
	if !errors.As(err, &oe) {
		// Transport errors: the SDK has already retried the ones it deems transient. A read may be sent
		// again; a write's outcome is unknown.
		var ne net.Error
		transient := errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		err = transportError(what, err)
		if idempotent && transient {
			return driverkit.Retryable(err)
		}
		return err
	}
	return codeError(what, oe, idempotent)
}

// unreachableError is a request that got no answer from the store: said in brine's words (which
// store, and why in a word) rather than as the HTTP client's "Post \"http://host/ListTable\": dial
// tcp ...", with the cause kept for errors.Is and errors.As.
type unreachableError struct {
	what, host, reason string
	cause              error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("tablestore: %s: the store at %s could not be reached (%s)", e.what, e.host, e.reason)
}

func (e *unreachableError) Unwrap() error { return e.cause }

// transportError is an error of the SDK's HTTP request, without a service code.
func transportError(what string, err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return fmt.Errorf("tablestore: %s: %w", what, err)
	}
	host := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
		host = u.Host
	}
	reason := ue.Err
	for errors.Unwrap(reason) != nil { // the innermost says it: "connection refused", "i/o timeout"
		reason = errors.Unwrap(reason)
	}
	return &unreachableError{what: what, host: host, reason: reason.Error(), cause: err}
}

func codeError(what string, oe *ots.OtsError, idempotent bool) error {
	var sentinel error
	switch oe.Code {
	case codeNotExist:
		sentinel = backends.ErrTableNotFound
	case codeAlreadyExist:
		sentinel = backends.ErrTableExists
	case codeParamInvalid, codeInvalidPK, codeColumnLimit, codeRowSizeLimit, codeBodyTooLarge:
		sentinel = backends.ErrInvalidArgument
	}
	var err error
	if sentinel != nil {
		err = fmt.Errorf("tablestore: %s: %w: %w", what, sentinel, oe)
	} else {
		err = fmt.Errorf("tablestore: %s: %w", what, oe)
	}
	if retryableCode(oe.Code, idempotent) {
		return driverkit.Retryable(err)
	}
	return err
}

func otsCode(err error) string {
	var oe *ots.OtsError
	if errors.As(err, &oe) {
		return oe.Code
	}
	return ""
}

// backoff computes the pause before retry attempt n (1-based): exponential with equal jitter, so
// concurrent writers that failed together do not come back together.
func (b *Backend) backoff(n int) time.Duration {
	d := b.opts.RetryBaseDelay << min(n-1, 16)
	if d <= 0 || d > b.opts.RetryMaxDelay {
		d = b.opts.RetryMaxDelay
	}
	half := d / 2
	return half + rand.N(half+1)
}

// sdkCall runs one SDK call. The SDK takes no context: ctx is checked before the call, and a call
// outlives a cancelled ctx by at most the SDK's request timeout and retry window. A panic inside the
// SDK (it dereferences response fields without checks) becomes an error instead of killing the
// program.
func sdkCall[T any](ctx context.Context, b *Backend, fn func() (T, error)) (res T, err error) {
	if b.closed.Load() {
		return res, errClosed
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tablestore sdk: unexpected response: %v", p)
		}
	}()
	return fn()
}
