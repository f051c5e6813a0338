// Package dropin is a salted gohbase.Client: code written against gohbase switches to salted tables
// by changing the line that makes its client, and keeps building its requests with gohbase's own hrpc
// types.
//
//	c, err := dropin.Open(ctx, hbase.Config{ZKQuorum: zk}) // was: c := gohbase.NewClient(zk)
//	put, _ := hrpc.NewPutStr(ctx, "metrics", key, values)
//	_, err = c.Put(put)                                     // written to prefix(bucket(key)) + key
//	scan, _ := hrpc.NewScanRangeStr(ctx, "metrics", from, to)
//	sc := c.Scan(scan)                                      // every bucket scanned, merged by logical key
//
// Each table's salter is, by default, the spec brine stored with the table when it was created
// (client.CreateTable), read once per table and cached; NewClient takes a function instead.
//
// How a call is rewritten. hrpc requests keep their fields unexported, so the wrapper builds a new
// request of the same kind from what a request exposes: table, key, context, values and the option
// functions it was made with (Options()), with the physical key in place of the logical one. It then
// compares the protobuf message of the new request with the original's (key aside, column order
// normalised): any difference, e.g. a setting made other than through an option, fails the call with
// ErrUnsupported naming the call and the field, before anything is sent. So every option gohbase
// offers is carried over or refused, never dropped.
//
// What it refuses (ErrUnsupported, naming the call and what is wrong):
//   - filters that look at row keys (RowFilter, PrefixFilter, InclusiveStopFilter, FuzzyRowFilter,
//     MultiRowRangeFilter, and any filter it does not know): the server would compare them with
//     physical keys. In a Scan also PageFilter and WhileMatchFilter, which count or stop per region,
//     so a fan-out over buckets would return other rows than one scan of an unsalted table.
//   - Scan with ScannerID or CloseScanner (internal options of gohbase's own scanner).
//   - reversed Scan without an hbase.Backend (see below), or with options other than Families,
//     NumberOfRows and AllowPartialResults.
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
// salter where the range allows), pulls them in parallel (WithConcurrency, WithPrefetch) and merges
// them by logical key (package fanout). The Scanner it returns closes every bucket scanner when it is
// closed, exhausted, or fails, and waits for its goroutines before Close returns. One caveat is
// gohbase's: its scanner, closed in the middle of a region, sends the close-scanner RPC from a
// goroutine of its own, which ends when that RPC returns.
//
// Reversed scans. A reversed hrpc.Scan reads (StopRow, StartRow], newest key first. gohbase's own
// reversed scanner, stepping to the previous region, restarts at "region start key minus one, padded
// with eight 0xFF bytes" and so skips every key that sorts between that and the region's start. The
// wrapper therefore reads each bucket with package hbase's region-by-region reverse scan
// (hbase.Backend.Scan), which has no such gap; that scan carries column selection and batch size
// only, so other options make a reversed Scan fail rather than be ignored.
package dropin
