package backends

import (
	"context"
	"errors"
	"iter"
	"time"
)

// Errors of BulkImporter.BulkImport a caller branches on.
var (
	// ErrRowsFailed: a bulk import refused rows (they went to BulkOptions.OnFailure) and loaded
	// the others.
	ErrRowsFailed = errors.New("brine: some rows were not loaded")
	// ErrBulkMismatch: the staging directory holds an unfinished bulk import of another table or
	// of other rows. Resume it with its own table and rows, or remove its work directory to
	// abandon it (what it loaded stays loaded).
	ErrBulkMismatch = errors.New("brine: the staging directory holds an unfinished import of another table or input")
)

// BulkImporter is implemented by drivers that can load rows as the store's own files, past its
// write path (HBase's bulk load of HFiles). It is optional: an import asking for it on a store
// without it fails with ErrUnsupported.
type BulkImporter interface {
	// BulkImport loads rows, puts of physical keys, into table. Every row is checked before
	// anything is loaded; a refused row goes to opts.OnFailure and is left out, and the call then
	// returns ErrRowsFailed after loading the others. An error yielded by rows ends the call with
	// nothing loaded. Cells of one row, column and timestamp: the last in the input wins. A call
	// killed part-way is resumed by calling it again with the same table, Staging and rows
	// (ErrBulkMismatch when they differ); what was loaded is not loaded again.
	BulkImport(ctx context.Context, table string, rows iter.Seq2[Mutation, error], opts BulkOptions) (BulkStats, error)
}

// BulkOptions tune a bulk import. Zero values take the driver's defaults.
type BulkOptions struct {
	// Staging is a directory of this machine that the store's servers read at the same path.
	// Required.
	Staging string
	// MemoryBytes bounds the cells buffered before sorted runs are spilled to Staging.
	MemoryBytes int
	// Workers is how many loads run at once.
	Workers int
	// Timestamp is given to cells without one (default: the import's start), so a resumed import
	// writes the versions the first attempt would have; a resume without it takes the first's.
	Timestamp time.Time
	// PutsWinTies makes a write made before the load, of the same row, column and timestamp as a
	// loaded cell, win over it; by default the loaded cell wins, as a write made at the time of
	// the load would.
	PutsWinTies bool
	// OnFailure receives every refused row, in input order, before the next row is read (so a
	// caller can tell which of its rows it was) and before anything is loaded.
	OnFailure func(BulkFailure)
}

// BulkFailure is a refused row: its position in the input, from 0, the row and why.
type BulkFailure struct {
	Index    int64
	Mutation Mutation
	Err      error
}

// BulkStats are a bulk import's counters.
type BulkStats struct {
	Rows, Cells int64 // valid rows, and the cells written for them (one per row, column and timestamp)
	Failed      int64 // rows refused, reported to OnFailure
	Files       int64 // files loaded by this call
	Bytes       int64 // their bytes
	Regions     int64 // loads that succeeded (one per region, or per part of a region that split)
	Runs        int64 // sorted runs spilled
	// PeakBuffered is the most cell bytes held in memory at once, as MemoryBytes counts them.
	PeakBuffered int64
	Splits       int64 // files cut because their region split before they were loaded
	Retries      int64 // loads sent again (region closing, busy, moved)
	// Resumed is set when the call found its own unfinished work and finished it; Skipped are
	// the loads that work had done already.
	Resumed bool
	Skipped int64
	Elapsed time.Duration
}
