package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/brine-kv/brine/client"
)

// errBulkFlags is the usage error of --bulk and --staging given wrong, before anything is sent.
var errBulkFlags = errors.New("--bulk")

// bulkFlags are import's bulk load: the rows written as HBase store files into a directory the
// region servers read at the same path, and loaded past the write path.
type bulkFlags struct {
	bulk    bool
	staging string
}

func (b *bulkFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&b.bulk, "bulk", false, "load the rows as HBase store files (bulk load), past the write path; needs --staging, an hbase:// store and a table without indexes or periods")
	fs.StringVar(&b.staging, "staging", "", "with --bulk: a directory of this machine the region servers read at the same path; it keeps an interrupted load's work, finished by running the same command again")
}

// check refuses --bulk and --staging where they cannot work, before the store is opened: store is
// --store, exclusive and resume the flags of those names.
func (b *bulkFlags) check(store string, exclusive, resume bool) error {
	switch {
	case b.staging != "" && !b.bulk:
		return fmt.Errorf("%w: --staging is the directory of a --bulk load: give --bulk too", errBulkFlags)
	case !b.bulk:
		return nil
	case b.staging == "":
		return fmt.Errorf("%w needs --staging DIR: a directory the region servers read at the same path", errBulkFlags)
	case !strings.HasPrefix(store, "hbase://"):
		return fmt.Errorf("%w: bulk loads are HBase's: --store %s is not hbase://", errBulkFlags, redactURL(store))
	case resume:
		return fmt.Errorf("%w: --resume takes over an exclusive job's fence, and a bulk load runs under none: run the same --bulk command again to finish an interrupted load", errBulkFlags)
	case exclusive:
		return fmt.Errorf("%w: --exclusive fences an indexed table, which a bulk load cannot write", errBulkFlags)
	}
	return nil
}

// options is the import's ImportOptions.Bulk: nil without --bulk.
func (b *bulkFlags) options() *client.BulkLoad {
	if !b.bulk {
		return nil
	}
	return &client.BulkLoad{Staging: b.staging}
}
