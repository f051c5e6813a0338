// Package periods keeps one logical table over one salted table per period (a day, an ISO week, a
// month or a fixed duration), for data that goes hot, then cold, then away: a whole period is dropped
// in O(1) instead of deleting its rows, and each period may have its own salting spec (a new bucket
// count from next month on).
//
// A Table routes each write by the time in its key, and reads a range from the periods that can hold
// it, merged into one stream in logical key order by client.Client.ScanTables. It is built on
// client's public API alone: each period is a client.Table, and the period list is the rows of one
// more, named as the logical table, whose meta holds the declaration (Config).
//
// Create and Open take the client.Client the tables live on, as client.Client.CreateTable and
// OpenTable do; IsTable tells a period table apart by its meta.
package periods
