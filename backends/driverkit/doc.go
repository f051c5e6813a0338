// Package driverkit holds the rules that brine's drivers apply themselves, one copy each, so that
// every store refuses, keeps and returns the same things: key, mutation and family checks, the
// version rules, counters and conditions, the paged-scan loop, the batch outcome of
// CheckAndMutateBatch, retry marking and counting, and the evaluation of filters.
//
// Package backends is the contract a driver implements, and nothing else, as database/sql/driver
// is; this package is the kit for writing one. A driver outside this module may use it too: the
// conformance suite (backends/backendtest) expects exactly these rules. Package client uses the few
// checks that let it refuse bad input before anything is sent (CheckBatch, CheckIncrements,
// CheckFamily, CheckFamilyOptions), the counter codec, and the filter evaluator for what it
// evaluates itself (row-key filters, on logical keys); those rules live here, beside the drivers'
// use of them, so that the client and every store cannot disagree.
package driverkit
