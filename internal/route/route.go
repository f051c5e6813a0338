// Package route is the physical layer below package client. A logical table lives in one physical
// table under one salter (Phys), or, while it is rebucketed, in two; its Router follows it through
// rebuckets by the directory table (dir.go), and sends each call to the physical table serving it,
// or through a rebucket's rules. Rebucket (rebucket.go) moves a table to another salter while its
// writers and readers go on; Merged (scan.go) is the fan-out scan with its k-way merge over buckets.
//
// client's Table is a thin wrapper over a Router: route knows nothing of
// indexes, key schemas beyond printing keys, or imports.
package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/keys"
)

// Core is a client's store and settings, shared by its routers and physical tables.
type Core struct {
	Backend backends.Backend
	Logger  *slog.Logger
	// Concurrency bounds the parallel batches of one bulk call (Apply, GetMany, CountByBucket).
	Concurrency int
	// ScanConcurrency bounds one scan's bucket streams read at once; 0: no bound.
	ScanConcurrency int
	// BatchRows bounds the rows of one store request in batched writes and reads.
	BatchRows int
	// Prefetch bounds the rows buffered per bucket during a scan.
	Prefetch int
	Tel      *telemetry.Telemetry // nil: nothing recorded
	// RouteRefresh is how long a router trusts its view of the directory.
	RouteRefresh time.Duration
}

// Errors package client re-exports.
var (
	// ErrNotFound: Get found no row with that key.
	ErrNotFound = errors.New("brine: row not found")
	// ErrRebucketing: the call cannot run while the table is being rebucketed.
	ErrRebucketing = errors.New("brine: table is being rebucketed")
	// ErrRebucketConflict: the directory row changed under a step.
	ErrRebucketConflict = errors.New("brine: directory row changed by another process")
	// ErrRebucketInProgress: a rebucket to another spec is under way.
	ErrRebucketInProgress = errors.New("brine: another rebucket is under way")
)

// keyTextMax is how much of a key an error message quotes: keys can be 32 KiB, and an error that
// carries one whole is as unreadable in a log as it is in a failure report.
const keyTextMax = 64

// KeyText quotes a key for an error message, cut to keyTextMax bytes with its full length when longer.
func KeyText(k []byte) string { return cutText(k, len(k)) }

// cutText quotes text, a key of n bytes or its printed form, cut to keyTextMax bytes with the key's
// length when longer: the length is the key's, not its text's (a 33,012-byte key printed by its
// schema is shorter text), since a key limit is what the reader compares it with.
func cutText(text []byte, n int) string {
	if len(text) <= keyTextMax {
		return strconv.Quote(string(text))
	}
	return fmt.Sprintf("%q... (a key of %d bytes)", text[:keyTextMax], n)
}

// SizeNote adds to err, when it is an invalid-key error of the stored key physical of the logical key
// logical, both sizes: a store's limit applies to the stored key, salt included, while the caller
// knows the key it gave.
func SizeNote(err error, logical, physical []byte) error {
	if err == nil || !errors.Is(err, backends.ErrInvalidKey) || len(physical) <= len(logical) {
		return err
	}
	return fmt.Errorf("%w (the key is %d bytes, %d stored with its %d-byte salt)", err, len(logical), len(physical), len(physical)-len(logical))
}

// PrintKey is KeyText for a key of a table with key schema ks: the key as the schema prints it (the
// CLI's form, "u,999" rather than "u\x00\x00\x00\x00\x00\x00\x03\xe7"); with no schema, or for a
// key the schema cannot read, the quoted bytes.
func PrintKey(ks *keys.Schema, k []byte) string {
	if ks == nil {
		return KeyText(k)
	}
	if s, err := ks.Format(k); err == nil {
		return cutText([]byte(s), len(k))
	}
	// A range bound is often a prefix: the leading fields of a key (PrefixRange, Index.Prefix).
	fields := ks.Fields()
	for n := len(fields) - 1; n > 0; n-- {
		if lead, err := keys.NewSchema(fields[:n]...); err == nil {
			if s, err := lead.Format(k); err == nil {
				return cutText([]byte(s), len(k))
			}
		}
	}
	return KeyText(k)
}

// KeyError wraps a salting error so that callers can branch on ErrInvalidKey whichever layer found it.
func KeyError(key []byte, err error) error {
	if errors.Is(err, backends.ErrInvalidKey) {
		return fmt.Errorf("key %s: %w", KeyText(key), err)
	}
	return fmt.Errorf("key %s: %w: %w", KeyText(key), backends.ErrInvalidKey, err)
}

// RowErrors is errs as Apply returns it: nil when every row was written.
func RowErrors(errs []error) []error {
	if slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return errs
	}
	return nil
}

// ApplyPart applies sub, the mutations at positions idx of a larger call, and records each one's
// outcome in errs at its position: the call's error for every row when it failed whole.
func ApplyPart(ctx context.Context, apply func(context.Context, []backends.Mutation) ([]error, error), sub []backends.Mutation, idx []int, errs []error) {
	rowErrs, err := apply(ctx, sub)
	for j, i := range idx {
		switch {
		case err != nil:
			errs[i] = err
		case rowErrs != nil && rowErrs[j] != nil:
			errs[i] = rowErrs[j]
		}
	}
}

// NewTelemetry is a client's telemetry: a row not found is an answer, not a failure.
func NewTelemetry(cfg telemetry.Config) (*telemetry.Telemetry, error) {
	cfg.Answer = func(err error) bool { return errors.Is(err, ErrNotFound) }
	return telemetry.New(cfg)
}
