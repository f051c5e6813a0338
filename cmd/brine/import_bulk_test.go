package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIImportBulkFlags: --bulk without --staging, --staging without --bulk, --bulk to a store
// that is not HBase and --bulk with --exclusive or --resume are usage errors found before the store
// is opened (the local store's file is never made), each naming the flag that is wrong.
func TestCLIImportBulkFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		flags []string
		names string // the flag the error names
	}{
		"bulk without staging": {[]string{"--bulk"}, "--staging"},
		"staging without bulk": {[]string{"--staging", "/tmp"}, "--bulk"},
		"local store":          {[]string{"--bulk", "--staging", "/tmp"}, "--store"},
		"memory store":         {[]string{"--bulk", "--staging", "/tmp", "--store", "memory://"}, "--store"},
		"exclusive":            {[]string{"--bulk", "--staging", "/tmp", "--store", "hbase://127.0.0.1:1", "--exclusive"}, "--exclusive"},
		"resume":               {[]string{"--bulk", "--staging", "/tmp", "--store", "hbase://127.0.0.1:1", "--exclusive", "--resume"}, "--resume"},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCLI(t)
			in := c.file("in.csv", csvRows(10, 10))
			args := append([]string{"import", "--store", c.store, "--table", "t", "--create", "--salt", "hash:4", "--key", typedKey}, tc.flags...)
			_, _, err := c.run(context.Background(), append(args, in)...)
			if !errors.Is(err, errBulkFlags) {
				t.Fatalf("error %v; want errBulkFlags", err)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not name %s", err, tc.names)
			}
			if _, err := os.Stat(filepath.Join(c.dir, "db")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the store was opened: %v", err)
			}
		})
	}
}

// TestBulkFlagsOptions: the import's ImportOptions.Bulk is nil without --bulk and holds --staging
// with it.
func TestBulkFlagsOptions(t *testing.T) {
	if o := (&bulkFlags{}).options(); o != nil {
		t.Fatalf("without --bulk: %+v", o)
	}
	b := bulkFlags{bulk: true, staging: "/srv/staging"}
	if err := b.check("hbase://zk:2181", false, false); err != nil {
		t.Fatal(err)
	}
	if o := b.options(); o == nil || o.Staging != "/srv/staging" {
		t.Fatalf("with --bulk --staging /srv/staging: %+v", o)
	}
}
