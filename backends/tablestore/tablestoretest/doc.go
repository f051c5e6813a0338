// Package tablestoretest is a local, protocol-faithful Tablestore (OTS) server for
// tests: the real Go SDK (tablestore.NewClient) talks to it over HTTP exactly as it
// talks to the service — signed requests, protobuf bodies, PlainBuffer rows with
// CRC-8 checksums — so code under test exercises the SDK's real encoding, error and
// retry paths instead of an interface-level fake.
//
// Covered: CreateTable, DescribeTable, UpdateTable, ListTable, DeleteTable, PutRow,
// GetRow, UpdateRow (put, delete one version, delete all versions, increment),
// DeleteRow, BatchGetRow, BatchWriteRow, GetRange and ComputeSplitPointsBySize;
// row-existence and column conditions, read filters, versions, TTL, time ranges,
// return content, auto-increment primary keys, the service's limits and error
// codes. Secondary indexes, search, streams and transactions are refused with
// OTSParameterInvalid.
//
// Faults: FailNext, FailRandomly, InjectErrors (per request) and FailNextRows,
// FailRowsRandomly, InjectRowErrors (per batch row). Stats counts requests and rows.
//
// The SDK retries retryable codes (OTSServerBusy, OTSPartitionUnavailable,
// OTSRowOperationConflict, OTSTableNotReady, OTSNotEnoughCapacityUnit,
// OTSStorageServerBusy, OTSQuotaExhausted with "Too frequent table operations.",
// and for read operations OTSTimeout, OTSInternalServerError, OTSServerUnavailable)
// up to 10 times within 5 s by default; a test that wants to see such an error must
// inject more failures than that or use a client with RetryTimes 0.
package tablestoretest
