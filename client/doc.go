// Package client is the API programs use to read and write salted tables. It sits above the driver
// contract in package backends as database/sql sits above database/sql/driver: a Client wraps any
// backends.Backend (the embedded store, HBase, Tablestore), and a Table hides the salt.
//
// Callers only see logical keys. A write computes the bucket of its key with the table's
// salting.Salter and stores prefix(bucket)+key; a point read or write touches exactly one bucket, so it
// costs what the raw driver costs. A range scan fans out to every bucket that may hold rows of the
// range (only one when the range fixes the salted prefix) and merges the per-bucket streams back into
// logical key order.
//
// The salting spec is stored with the table when it is created and checked whenever the table is
// opened, so two programs can never write the same table with different salts.
package client
