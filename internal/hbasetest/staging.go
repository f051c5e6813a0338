package hbasetest

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvStaging names the variable holding a directory that the test server's region servers read
// at the same path as the tests write it: store files to bulk load. docker-compose.yml mounts it
// into the standalone server at that path; a server from the jars runs on this machine and reads it
// as it is.
const EnvStaging = "BRINE_HBASE_STAGING"

// DefaultStaging is the staging directory when EnvStaging is not set (docker-compose.yml's default).
const DefaultStaging = "/tmp/brine-hbase-staging"

// Staging returns a new directory under the test server's staging directory, removed at the end
// of the test. It is open to every user: the region server moves the files out of it.
func Staging(tb testing.TB) string {
	tb.Helper()
	root := os.Getenv(EnvStaging)
	if root == "" {
		root = DefaultStaging
	}
	if err := os.MkdirAll(root, 0o777); err != nil {
		tb.Fatalf("staging directory %s: %v", root, err)
	}
	dir, err := os.MkdirTemp(root, "t-")
	if err != nil {
		tb.Fatalf("staging directory under %s: %v", root, err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}
