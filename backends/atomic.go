package backends

// Condition is what CheckAndMutate tests on a row: the newest version of one column holds Value,
// byte for byte. An empty Value matches a column with no version or an empty value: HBase's rule (its
// check-and-put takes an empty expected value to mean the column is absent, and cannot tell the two
// apart), kept on every store.
type Condition struct {
	Family    string
	Qualifier string
	Value     []byte
}

// Increment adds Delta to the counter in one column: an 8-byte big-endian two's-complement integer
// (HBase's Bytes.toBytes(long)); an absent column counts as 0.
type Increment struct {
	Family    string
	Qualifier string
	Delta     int64
}

// CondMutation is one row's conditional write in a batch: Mut is applied to its row if Cond holds
// there, as CheckAndMutate does.
type CondMutation struct {
	Cond Condition
	Mut  Mutation
	// Deferred lets the store acknowledge the write before it is durable: HBase sends it with
	// Durability ASYNC_WAL, so the region server appends it to its WAL without waiting for a sync
	// (it syncs within hbase.regionserver.optionallogflushinterval, 1 s by default). A region
	// server's crash can lose it, but not on its own: the WAL keeps a region's edits in order, so
	// any later write to the same region acknowledged as durable makes it durable too. It is meant
	// for bookkeeping whose loss is repaired, where a conditional row's own WAL sync is most of its
	// cost. Stores without the notion write it durably; outcomes are the same either way.
	Deferred bool
}
