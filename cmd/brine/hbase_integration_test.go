//go:build integration

package main

import (
	"testing"

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
