package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	bberrors "go.etcd.io/bbolt/errors"

	"github.com/brine-kv/brine/backends/local"
)

// A local:// store another process has open fails with an error that says the embedded store is
// single-process and what to use instead: local.ErrLocked, still wrapping bbolt's timeout.
func TestLocalStoreBusy(t *testing.T) {
	c := newCLI(t)
	path := filepath.Join(c.dir, "busy.db")
	held, err := local.Open(context.Background(), local.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, _, err = c.run(context.Background(), "tables", "--store", "local://"+path)
	if err == nil {
		t.Fatal("a second open of a held local store succeeded")
	}
	if !errors.Is(err, local.ErrLocked) || !errors.Is(err, bberrors.ErrTimeout) {
		t.Errorf("error %v: want local.ErrLocked, wrapping bbolt's ErrTimeout", err)
	}
	for _, want := range []string{"single-process", "hbase://", "tablestore://"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
