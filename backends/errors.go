package backends

import "errors"

// Sentinel errors shared by every driver and by the client. Drivers wrap them with %w and context.
var (
	// ErrTableNotFound: the table does not exist.
	ErrTableNotFound = errors.New("brine: table not found")
	// ErrTableExists: CreateTable on a table that exists.
	ErrTableExists = errors.New("brine: table already exists")
	// ErrInvalidKey: a key is empty, too long, or otherwise not accepted by the store. Raised before
	// anything is sent.
	ErrInvalidKey = errors.New("brine: invalid key")
	// ErrInvalidArgument: a request that cannot be sent as given (bad column name, value too large, ...).
	ErrInvalidArgument = errors.New("brine: invalid argument")
	// ErrUnsupported: what was asked cannot be done faithfully here, and nothing was sent: a cell
	// filter under Or or Not, a request the drop-ins cannot rewrite onto salted keys.
	ErrUnsupported = errors.New("brine: unsupported")
	// ErrClosed: the backend was closed; every later call fails with it. Drivers wrap it with their
	// package prefix ("memory: backend closed: ...").
	ErrClosed = errors.New("brine: backend closed")
	// ErrMetaChanged: RewriteTableMeta found a table's stored meta other than the one the caller read;
	// read it again and redo the change.
	ErrMetaChanged = errors.New("brine: table meta changed by another writer")
	// ErrRetryable marks a transient failure (server busy, region moving, throttled): the same request
	// may succeed if sent again. Drivers mark such errors with driverkit.Retryable, which keeps
	// their message; callers test with errors.Is (or client.IsRetryable).
	ErrRetryable = errors.New("brine: retryable")
)
