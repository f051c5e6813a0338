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
}

var javaClass = regexp.MustCompile(`(?:HBase Java exception|procedure exception:) ([A-Za-z0-9_.$]+)`)

// javaException returns the class name of the Java exception err reports, if any.
func javaException(err error) string {
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
	// The server's cell size check throws a bare DoNotRetryIOException.
	if class == "org.apache.hadoop.hbase.DoNotRetryIOException" && strings.Contains(err.Error(), "exceeds limit") {
		return kindInvalid
	}
	return kindOther
}

// wrapErr adds context to err and the sentinel of package backends that matches it.
func wrapErr(op, table string, err error) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("hbase: %s %q", op, table)
	switch classify(err) {
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
		return backends.Retryable(fmt.Errorf("%s: %w", what, err))
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
		return backends.Retryable(fmt.Errorf("hbase: %s %q: request timed out: %w", op, table, err))
	}
	return wrapErr(op, table, err)
}
