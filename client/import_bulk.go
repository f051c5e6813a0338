package client

import (
	"time"

	"github.com/brine-kv/brine/backends"
)

// BulkLoad is ImportOptions.Bulk: an import that loads its rows as the store's own files (HBase's
// bulk load of HFiles), past the write path, on a store whose driver is a backends.BulkImporter.
// Each row is taken as a plain import takes it (its key salted, its cells checked, OnDuplicate
// applied, a refused row reported to OnFailure with its input position and counted in Failed), and
// every row is checked before anything is loaded. What changes:
//
//   - Rows are puts: a delete is refused (to OnFailure), as is a cell of a family the table lacks.
//   - Workers, BatchRows, BatchBytes, MaxPending, MaxAttempts and the backoffs are not used:
//     Loads, MemoryBytes and the driver's own retries tune the load.
//   - Without ImportOptions.Timestamp the store stamps cells without one, and a key given more than
//     once keeps its last occurrence as one version (a plain import writes each as a version 1 ms
//     newer). With it, repeats are stamped as a plain import stamps them.
//   - An error of the import as a whole (ctx ended, a load failed, backends.ErrBulkMismatch) is
//     returned with ImportStats.Written 0 and the rows not reported one by one: what was loaded
//     stays loaded, and Import again with the same rows, Staging and Timestamp resumes the rest.
//
// On a store without bulk loads Import fails with an error wrapping ErrUnsupported before it reads
// a row. A table with indexes and an ExclusiveTable refuse it the same way: the index entries would need files
// of their own, loaded under the exclusive fence, which is not built; so does a period table
// (periods.Table), whose rows go to several tables at once.
type BulkLoad struct {
	// Staging is a directory of this machine that the store's servers read at the same path
	// (required); it holds one bulk import's work at a time, kept there until the load ends.
	Staging string
	// MemoryBytes bounds the cells buffered before sorted runs are spilled to Staging (the
	// driver's default).
	MemoryBytes int
	// Loads is how many regions are loaded at once (the driver's default).
	Loads int
	// PutsWinTies makes a write made before the load, of a loaded cell's row, column and
	// timestamp, win over it (by default the loaded cell wins, as a write at load time would).
	PutsWinTies bool
}

// options is the driver's view of b; stamp is ImportOptions.Timestamp as the caller gave it.
func (b *BulkLoad) options(stamp time.Time) backends.BulkOptions {
	return backends.BulkOptions{Staging: b.Staging, MemoryBytes: b.MemoryBytes, Workers: b.Loads, Timestamp: stamp, PutsWinTies: b.PutsWinTies}
}
