//go:build integration

package main

import (
	"context"
	"errors"
	"testing"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// The CLI's import rules on the real HBase (BRINE_HBASE_ZK): the same checks as on the embedded store
// and the Tablestore server.

func hbaseCLI(t *testing.T) *cli {
	c := newCLI(t)
	c.store = "hbase://" + hbasetest.ZK(t)
	c.tablePrefix = hbasetest.Table("brine_cli")
	return c
}

func TestHBaseCLIImportDuplicateKeys(t *testing.T) { checkCLIDuplicates(t, hbaseCLI(t)) }

func TestHBaseCLIImportInterruptResumes(t *testing.T) { checkCLIInterrupt(t, hbaseCLI(t), 8_000, true) }

func TestHBaseCLITablesDescribeDrop(t *testing.T) { checkTablesDescribeDrop(t, hbaseCLI(t), true) }

func TestHBaseCLIPeriods(t *testing.T) { checkCLIPeriods(t, hbaseCLI(t)) }

func TestHBaseCLIIndex(t *testing.T) { checkCLIIndex(t, hbaseCLI(t)) }

func TestHBaseCLIScanFormats(t *testing.T) { checkCLIScanFormats(t, hbaseCLI(t)) }

// TestHBaseCLIVerify compares a table on the embedded store with its copy on HBase.
func TestHBaseCLIVerify(t *testing.T) {
	c := newCLI(t)
	local := c.store
	h := hbaseCLI(t)
	c.store, c.tablePrefix = h.store, h.tablePrefix
	checkCLIVerify(t, c, local)
}

// TestHBaseCLICopy: a copy from the embedded store to HBase, interrupted and resumed; then the
// migration recipe from HBase to the embedded store.
func TestHBaseCLICopy(t *testing.T) {
	t.Run("interrupted", func(t *testing.T) {
		c := newCLI(t)
		local := c.store
		h := hbaseCLI(t)
		c.store, c.tablePrefix = h.store, h.tablePrefix
		checkCLICopyInterrupt(t, c, local)
	})
	t.Run("recipe", func(t *testing.T) {
		h := hbaseCLI(t)
		checkCLIRecipe(t, newCLI(t), h.store, h.tab("orders")) // h drops the source at the end
	})
}

// TestHBaseCLIImportBulk: import --bulk --staging loads a CSV with repeated keys into a table it
// creates (the last occurrence of each key stored, the repeats counted), and into a period table
// it refuses before loading anything.
func TestHBaseCLIImportBulk(t *testing.T) {
	c := hbaseCLI(t)
	staging := hbasetest.Staging(t)
	in := c.file("dups.csv", csvRows(3000, 1000))
	table := c.tab("bulk")
	out := c.ok("import", "--store", c.store, "--table", table, "--create", "--salt", "hash:8", "--key", typedKey, "--bulk", "--staging", staging, in)
	if r := parseImportReport(t, out); r != (importReport{Read: 3000, Written: 3000, Duplicates: 2000}) {
		t.Fatalf("bulk import: %+v\n%s", r, out)
	}
	c.wantTable(table, lastValues(3000, 1000))

	periods := c.tab("bulkp")
	c.ok("periods", "declare", periods, "--store", c.store, "--period", "month", "--time-field", "1", "--salt", "hash:4", "--key", typedKey)
	_, _, err := c.run(context.Background(), "import", "--store", c.store, "--table", periods, "--bulk", "--staging", staging, in)
	if !errors.Is(err, client.ErrUnsupported) {
		t.Fatalf("bulk import into a period table: %v, want ErrUnsupported", err)
	}
}
