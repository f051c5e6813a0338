package testkit

import (
	"context"
	"testing"

	"github.com/brine-kv/brine/backends"
)

// Cell is the cell most tests write: family "d", qualifier q, value v, timestamp 1.
// client.Cell is the same type.
func Cell(q, v string) backends.Cell {
	return backends.Cell{Family: "d", Qualifier: q, Value: []byte(v), Timestamp: 1}
}

// Keys are the rows' keys (client.Row is the same type).
func Keys(rows []backends.Row) [][]byte {
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = r.Key
	}
	return out
}

// KeyStrings are the rows' keys as strings.
func KeyStrings(rows []backends.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r.Key)
	}
	return out
}

// Apply writes muts to table through b, failing the test on an error of the call or of a row.
func Apply(t testing.TB, ctx context.Context, b backends.Backend, table string, muts ...backends.Mutation) {
	t.Helper()
	rowErrs, err := b.Apply(ctx, table, muts)
	if err != nil || rowErrs != nil {
		t.Fatalf("Apply of %d mutations to %s: %v; row errors %v", len(muts), table, err, rowErrs)
	}
}
