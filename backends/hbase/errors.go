package hbase

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/region"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// errKind is what a caller may branch on; everything else stays a plain (wrapped) error.
type errKind int

const (
	kindOther errKind = iota
	kindNotFound
	kindExists
	kindInvalid
	kindRetryable
	kindNotEnabled // table disabled: DeleteTable's disable step treats it as done
)

// javaExceptions classifies the Java exceptions gohbase passes through as text ("HBase Java exception
// CLASS: ..." for RPC errors, "procedure exception: CLASS: ..." for master procedures).
var javaExceptions = map[string]errKind{
	"org.apache.hadoop.hbase.TableNotFoundException":                    kindNotFound,
	"org.apache.hadoop.hbase.TableExistsException":                      kindExists,
	"org.apache.hadoop.hbase.TableNotEnabledException":                  kindNotEnabled,
	"org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException":  kindInvalid,
	"org.apache.hadoop.hbase.exceptions.FailedSanityCheckException":     kindInvalid,
	"org.apache.hadoop.hbase.client.WrongRowIOException":                kindInvalid,
	"java.lang.IllegalArgumentException":                                kindInvalid,
	"org.apache.hadoop.hbase.NotServingRegionException":                 kindRetryable,
	"org.apache.hadoop.hbase.exceptions.RegionMovedException":           kindRetryable,
	"org.apache.hadoop.hbase.exceptions.RegionOpeningException":         kindRetryable,
	"org.apache.hadoop.hbase.RegionTooBusyException":                    kindRetryable,
	"org.apache.hadoop.hbase.CallQueueTooBigException":                  kindRetryable,
	"org.apache.hadoop.hbase.CallDroppedException":                      kindRetryable,
	"org.apache.hadoop.hbase.ipc.ServerNotRunningYetException":          kindRetryable,
	"org.apache.hadoop.hbase.ipc.CallTimeoutException":                  kindRetryable,
	"org.apache.hadoop.hbase.exceptions.TimeoutIOException":             kindRetryable,
	"org.apache.hadoop.hbase.PleaseHoldException":                       kindRetryable,
	"org.apache.hadoop.hbase.RetryImmediatelyException":                 kindRetryable,
	"org.apache.hadoop.hbase.MultiActionResultTooLarge":                 kindRetryable,
	"org.apache.hadoop.hbase.quotas.RpcThrottlingException":             kindRetryable,
	"org.apache.hadoop.hbase.quotas.ThrottlingException":                kindRetryable,
	"org.apache.hadoop.hbase.regionserver.RegionServerAbortedException": kindRetryable,
	"org.apache.hadoop.hbase.regionserver.RegionServerStoppedException": kindRetryable,
	"org.apache.hadoop.hbase.UnknownScannerException":                   kindRetryable,
	"org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException": kindRetryable,
	"org.apache.hadoop.hbase.exceptions.ScannerResetException":          kindRetryable,
	// The scanner's lease ended under it (a scan stalled past hbase.client.scanner.timeout.period,
	// e.g. while its region moved); the driver reopens the scanner after the last row, as HBase's
	// own client does.
	"org.apache.hadoop.hbase.regionserver.LeaseException": kindRetryable,
}

var javaClass = regexp.MustCompile(`(?:HBase Java exception|procedure exception:) ([A-Za-z0-9_.$]+)`)

// javaException returns the class name of the Java exception err reports, if any: err may be
// gohbase's error, or one wrapErr already made (a JavaError, whose text no longer says "HBase Java
// exception").
func javaException(err error) string {
	var je *JavaError
	if errors.As(err, &je) {
		return je.Class
	}
	if m := javaClass.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}

// classify says what kind of failure err is.
func classify(err error) errKind {
	if err == nil {
		return kindOther
	}
	if errors.Is(err, gohbase.TableNotFound) {
		return kindNotFound
	}
	if errors.Is(err, gohbase.ErrCannotFindRegion) {
		return kindRetryable
	}
	var (
		retry  region.RetryableError
		moved  region.NotServingRegionError
		server region.ServerError
	)
	if errors.As(err, &retry) || errors.As(err, &moved) || errors.As(err, &server) {
		return kindRetryable
	}
	class := javaException(err)
	if k, ok := javaExceptions[class]; ok {
		return k
	}
	// The server's cell size check, and an increment of a cell that is not 8 bytes, throw a bare
	// DoNotRetryIOException.
	if class == "org.apache.hadoop.hbase.DoNotRetryIOException" &&
		(strings.Contains(err.Error(), "exceeds limit") || strings.Contains(err.Error(), "Field is not a long")) {
		return kindInvalid
	}
	return kindOther
}

// JavaError is an exception the HBase server threw. Its text is one line, the exception's class and
// message: the server's Java stack trace stays out of error strings, in Trace, for debugging. Unwrap
// returns gohbase's original error.
type JavaError struct {
	Class   string
	Message string
	Trace   string
	err     error
}

func (e *JavaError) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}

func (e *JavaError) Unwrap() error { return e.err }

// javaError turns gohbase's "HBase Java exception CLASS:\nTRACE" error into a JavaError, and leaves
// other errors alone.
func javaError(err error) error {
	text := err.Error()
	const marker = "HBase Java exception "
	i := strings.Index(text, marker)
	if i < 0 {
		return err
	}
	class, trace, ok := strings.Cut(text[i+len(marker):], ":\n")
	if !ok {
		return err
	}
	var msg []string
	for _, line := range strings.Split(trace, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "at ") || strings.HasPrefix(line, "Caused by:") {
			break
		}
		if line != "" {
			msg = append(msg, line)
		}
	}
	message := strings.TrimPrefix(strings.Join(msg, " "), class+": ")
	if message == class {
		message = ""
	}
	return &JavaError{Class: class, Message: message, Trace: trace, err: err}
}

// wrapErr adds context to err and the sentinel of package backends that matches it.
func wrapErr(op, table string, err error) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("hbase: %s %q", op, table)
	kind := classify(err)
	err = javaError(err)
	switch kind {
	case kindNotFound:
		if !errors.Is(err, gohbase.TableNotFound) {
			// Both sentinels match errors.Is: brine's, and gohbase's for code written against gohbase.
			err = fmt.Errorf("%w: %w", gohbase.TableNotFound, err)
		}
		return fmt.Errorf("%s: %w: %w", what, backends.ErrTableNotFound, err)
	case kindExists:
		return fmt.Errorf("%s: %w: %w", what, backends.ErrTableExists, err)
	case kindInvalid:
		return fmt.Errorf("%s: %w: %w", what, backends.ErrInvalidArgument, err)
	case kindRetryable:
		return driverkit.Retryable(fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// rpcErr is wrapErr for an RPC that ran under a per-request timeout (Options.RequestTimeout): if that
// timeout fired while the caller's ctx is still live, the request may well succeed when sent again.
func rpcErr(parent context.Context, op, table string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
		return driverkit.Retryable(fmt.Errorf("hbase: %s %q: request timed out: %w", op, table, err))
	}
	return wrapErr(op, table, err)
}
