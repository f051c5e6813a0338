// Package reliability holds brine's cross-package reliability tests: fan-out scans, batches and bulk
// import under injected faults (backends/faulty), cancellation at random points, a bounded soak of
// concurrent writers and scanners, bad input, and fuzz targets for the spec parsers. It has no
// non-test code.
//
// The fast suite runs with `go test -race ./reliability/`. Longer runs:
//
//	BRINE_SOAK=10m go test -run TestSoak -timeout 0 -v ./reliability/   # the soak, for 10 minutes
//	BRINE_SEEDS=2000 go test -run 'Faults' -v ./reliability/            # more seeds per fault test
package reliability
