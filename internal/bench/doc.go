// Package bench measures brine against the store's raw driver on the same server in the same run,
// and reports ratios: how monotonic writes spread over regions, write throughput (a naive
// one-Put-at-a-time loop, the raw driver's best concurrent batching, brine's bulk import), range-scan
// throughput and time to first row (one raw range vs brine's fan-out over 1..N buckets), point-get
// latency and its cost in RPCs, and how many rows a limited fan-out scan reads per row it returns.
//
// On HBase the raw side is gohbase itself (OpenHBase); on other stores it is the same backends driver
// called directly, without salting (BackendStore). Run does the measuring; Report renders Markdown and
// JSON and holds every figure against its target (Evaluate). `brine bench` is the command.
package bench
