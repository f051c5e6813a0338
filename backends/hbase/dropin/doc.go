// Package dropin is a salted gohbase.Client: code written against gohbase switches to salted tables
// by changing the line that makes its client, and keeps building its requests with gohbase's own hrpc
// types.
//
//	c := dropin.NewClient(zk) // was: c := gohbase.NewClient(zk); same options, same result type
//	put, _ := hrpc.NewPutStr(ctx, "metrics", key, values)
//	_, err = c.Put(put)       // written to prefix(bucket(key)) + key
//	scan, _ := hrpc.NewScanRangeStr(ctx, "metrics", from, to)
//	sc := c.Scan(scan)        // every bucket scanned, merged by logical key
//
// NewClient, like gohbase.NewClient, neither blocks nor fails: it connects on the first call, which
// reports a connection that cannot be made, and the next call tries again. Open connects at once and
// returns the error; with options of this package:
//
//	c, err := dropin.Open(ctx, hbase.Config{ZKQuorum: zk}, dropin.WithScanConcurrency(8))
//
// or, keeping a gohbase client the program already makes:
//
//	c := dropin.New(gohbase.NewClient(zk), dropin.WithBackend(b)) // b: hbase.Open's or hbase.New's driver
//
// New and its options have the shape of the Tablestore drop-in's (backends/tablestore/dropin):
// WithSalter(table, s) per table, WithUnsalted for tables without a stored spec, WithBackend for the
// brine driver that stored specs are read through, WithLogger (nothing is logged without it). Each
// table's salter is WithSalter's, checked against the spec brine stored with the table when it was
// created (client.CreateTable), else that stored spec, read once per table and cached.
//
// How a call is rewritten. hrpc requests keep their fields unexported, so the wrapper builds a new
// request of the same kind from what a request exposes: table, key, context, values and the option
// functions it was made with (Options()), with the physical key in place of the logical one. It then
// compares the protobuf message of the new request with the original's (key aside, column order
// normalised): any difference, e.g. a setting made other than through an option, fails the call with
// ErrUnsupported naming the call and the field, before anything is sent. So every option gohbase
// offers is carried over or refused, never dropped.
//
// Row-key filters that can be carried exactly are rewritten: a PrefixFilter, alone or in a
// MUST_PASS_ALL FilterList, narrows a Scan's logical range to the prefix's range (then split per
// bucket as any range), and on a Get is dropped (the row has the prefix) or replaced by a filter that
// passes no row (it has not). A Scan with TrackScanMetrics instead sends each bucket the Scan's own
// range and the filter with its prefixes behind the bucket's prefix, so that the server reads and
// filters, and its metrics count, what it does on an unsalted table. On an unsalted table (stored spec "none", or WithUnsalted for a table
// brine did not create) every request goes to the server as the caller built it. So do requests to
// HBase's own tables (hbase:meta, hbase:namespace, any table of the hbase: namespace), with no
// option: they are never salted.
//
// What it refuses on a salted table (ErrUnsupported, naming the call and what is wrong):
//   - filters that compare row keys in a way no per-bucket range expresses (RowFilter,
//     InclusiveStopFilter, FuzzyRowFilter, MultiRowRangeFilter, a PrefixFilter under MUST_PASS_ONE or
//     a wrapper, and any filter it does not know): the server would compare them with salted keys. In
//     a Scan also PageFilter and WhileMatchFilter, which count or stop per region, so a fan-out over
//     buckets would return other rows than one scan of an unsalted table.
//   - Scan with ScannerID or CloseScanner (internal options of gohbase's own scanner).
//   - reversed Scan without WithBackend (see below), or with options other than Families,
//     NumberOfRows and AllowPartialResults.
//
// Tables with indexes (declared by client.CreateTable or AddIndex, recognised by their stored meta
// when the client first uses the table, so only with WithBackend, Open or NewClient; an index added
// after that is not seen, which is why AddIndex asks for NoPlainWriters): every write (Put, Delete, Append, Increment,
// CheckAndPut) fails with ErrIndexedTable before anything is sent, since only client.Table
// keeps their index tables in step. Get and Scan drop the version column (client.IndexVersionQualifier) the index protocol
// keeps in each row, unless the request names it by qualifier; a row holding that column alone is
// no row (a Get returns no cells, a Scan skips it), and an existence-only Get is sent as a Get and
// answers whether any other cell exists.
//
// Errors are gohbase's wherever gohbase would have returned one, unwrapped, since gohbase callers
// compare with ==: a done context gives ctx.Err() (a Scanner's Next too, as soon as the context ends,
// rows buffered or not), a closed client gohbase.ErrClientClosed, a missing table
// gohbase.TableNotFound, and a bucket scanner's failure the error gohbase's scanner returned.
//
// Keys are checked before anything is sent: an empty logical key is refused, and so is a physical key
// longer than hbase.MaxKeyLen (HBase's own limit is 32767 bytes; gohbase needs room for the table name
// to locate a key's region, see package hbase). Errors wrap backends.ErrInvalidKey.
//
// Results carry logical row keys: every returned cell's Row is the logical key, and a cell whose
// physical row is not the one asked for (or not a key of the table's salter) is an error, never a
// row handed back under the wrong key.
//
// Scan over the logical range [StartRow, StopRow) opens one gohbase scanner per bucket (pruned by the
// salter where the range allows), pulls them in parallel (WithScanConcurrency, WithPrefetch) and merges
// them by logical key (package fanout). The Scanner it returns closes every bucket scanner when it is
// closed, exhausted, or fails, and waits for its goroutines before Close returns. One caveat is
// gohbase's: its scanner, closed in the middle of a region, sends the close-scanner RPC from a
// goroutine of its own, which ends when that RPC returns.
//
// ScanV2 merges the buckets' gohbase ScanV2 results the same way and hands them back in responses
// of at most NumberOfRows results and about MaxResultSize bytes (a merge of buckets has no region
// server's answer to map one to one); SendBatch rebuilds every call of the batch and keeps gohbase's
// contract (results in order, allOK, NotExecutedError for calls not sent). A Scanner's
// GetScanMetrics is the sum over the buckets' scanners; a WithScanStatsHandler handler gets each
// bucket RPC's ScanStats as gohbase makes them (that RPC's ScanMetrics), one call at a time.
// gohbase.DebugState(c) leaves out the regions of brine's own meta table (hbase.MetaTable). docs/drop-ins.md lists what differs from
// gohbase, as gohbase's own suite shows it.
//
// Reversed scans. A reversed hrpc.Scan reads (StopRow, StartRow], newest key first. gohbase's own
// reversed scanner, stepping to the previous region, restarts at "region start key minus one, padded
// with eight 0xFF bytes" and so skips every key that sorts between that and the region's start. The
// wrapper therefore reads each bucket with package hbase's region-by-region reverse scan
// (hbase.Backend.Scan), which has no such gap; that scan carries column selection and batch size
// only, so other options make a reversed Scan fail rather than be ignored.
package dropin
