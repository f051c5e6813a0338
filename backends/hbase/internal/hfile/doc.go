// Package hfile writes and reads HBase's store files, HFile format version 3, so that the HBase
// driver can bulk-load cells without a MapReduce job or a Java process. There is no public Go
// writer of the format; this one follows HBase 2.6's own (HFileWriterImpl, HFileBlock,
// HFileBlockIndex, FixedFileTrailer, HFileInfo, StoreFileWriter, HFileOutputFormat2), as facts
// about the bytes, and every file its tests write is read back by HBase's HFilePrettyPrinter.
//
// A file, in the order it is written:
//
//	data blocks ("DATABLK*"), each followed by any leaf index block ("IDXLEAF2") that filled up
//	intermediate index blocks ("IDXINTE2"), when the root index would exceed Options.IndexBlockSize
//	root data index ("IDXROOT2")   ┐
//	meta index ("IDXROOT2", empty) │ the load-on-open section
//	file info ("FILEINF2")         ┘
//	trailer ("TRABLK\"$", 4096 bytes: protobuf FileTrailerProto, zero padding, version 3.3)
//
// Every block has HBase's 33-byte header (magic, on-disk and uncompressed sizes, the offset of the
// previous block of its type, checksum type, bytes per checksum, on-disk size with header) and is
// followed by one CRC32C per Options.BytesPerChecksum bytes of header and data. Data blocks hold
// cells unencoded (DataBlockEncoding NONE), each as keyLen(4) valueLen(4) key value tagsLen(2)
// mvcc(vlong): a version 3 reader always expects the tags length, and files carry the memstore
// timestamp (always 0 here) as HFileOutputFormat2's do. Keys are KeyValue keys: rowLen(2) row
// famLen(1) family qualifier timestamp(8) type(1).
//
// The file info carries what HBase's writer and HFileOutputFormat2 put there (LASTKEY, AVG_KEY_LEN,
// AVG_VALUE_LEN, CREATE_TIME_TS, the biggest cell, MAX_TAGS_LEN, TAGS_COMPRESSED, MAX_MEMSTORE_TS_KEY,
// KEY_VALUE_VERSION, TIMERANGE, EARLIEST_PUT_TS, BULKLOAD_TIMESTAMP, BULKLOAD_SOURCE_TASK,
// MAJOR_COMPACTION_KEY, EXCLUDE_FROM_MINOR_COMPACTION, DELETE_FAMILY_COUNT). No Bloom filter is
// written: a store file without BLOOM_FILTER_TYPE is read as having none.
//
// The protobuf messages (FileTrailerProto, FileInfoProto, TimeRangeTracker) are encoded by hand with
// protowire: they are three flat messages of scalars and byte pairs, and generated code would need
// protoc and HBase's .proto files in the build for a few dozen lines of encoding.
package hfile
