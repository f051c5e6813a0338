// Package integration is brine's end-to-end suite: it proves against real servers what the unit
// tests of each package can only argue from fakes. It holds only tests (build tag integration);
// this file exists so that `go vet ./...` sees the package without the tag.
//
// The HBase tests (hbase_*_test.go) run against the real standalone HBase of `make hbase-up` and prove:
//
//   - spread: monotonic keys written through a hash:16 table land evenly in its 16 pre-split
//     regions (max/mean <= 1.1, counted server-side region by region), while the same keys in an
//     unsalted table pre-split into 16 regions all land in one;
//   - scan equivalence: for several salting specs, every range shape (full, pruned to one bucket,
//     empty, inverted, bounds on keys, 0x00/0xFF bounds, prefix keys), limit, reverse scan and
//     cursor paging returns exactly the rows, values and order of a raw gohbase scan of an unsalted
//     copy, and a range within one leading value reads one bucket only;
//   - a region split, flush and major compaction during a slow fan-out scan lose and duplicate
//     nothing;
//   - opening a table with another salting spec fails with client.ErrSpecMismatch and writes
//     nothing, and opening with no salter adopts the stored spec;
//   - the gohbase drop-in (backends/hbase/dropin) gives the same answers through gohbase's own hrpc
//     types, with logical keys in its results, and refuses what it cannot rewrite with
//     dropin.ErrUnsupported before anything is sent;
//   - cancelling or abandoning a fan-out scan (context cancel, break, Scanner.Close) leaves no
//     goroutine behind.
//
// Run them with:
//
//	make hbase-up; BRINE_HBASE_ZK=127.0.0.1:2181 go test -tags integration ./integration/
//
// Without BRINE_HBASE_ZK the HBase tests skip (CI=true makes that a failure); tests of other stores in
// this package do not need HBase. Each test creates uniquely named tables and drops them when it
// ends. The whole package takes a few minutes: region operations (split, flush, compact) each start
// a JVM through scripts/hbase/admin.sh.
package integration
