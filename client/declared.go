package client

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
)

// checkDeclared refuses to open a table whose stored key schema or families are not cfg's
// (ErrSchemaMismatch), naming each difference: CreateOrOpenTable's caller states what the table is,
// and a drift ignored here surfaced later as a failed write ("no column family"). A table that
// recorded no families (created outside brine, or before they were recorded) is not checked for them.
func checkDeclared(name string, cfg TableConfig, meta map[string]string) error {
	given, err := cfg.keySchema()
	if err != nil {
		return fmt.Errorf("open table %q: %w", name, err)
	}
	stored, err := metaKeySchema(meta)
	if err != nil {
		return fmt.Errorf("open table %q: %w", name, err)
	}
	var diffs []string
	schemaText := func(ks *keys.Schema) string {
		if ks == nil {
			return "none"
		}
		return strconv.Quote(ks.String())
	}
	if g, s := schemaText(given), schemaText(stored); g != s {
		diffs = append(diffs, fmt.Sprintf("key schema %s given, the table's is %s", g, s))
	}
	if raw, ok := meta[MetaLayout]; ok {
		var l layout
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			return fmt.Errorf("open table %q: %w: stored families: %w", name, backends.ErrInvalidArgument, err)
		}
		fams := cfg.Families
		if len(fams) == 0 {
			fams = []string{DefaultFamily}
		}
		// A family set, not a list: a store keeps no order of its families.
		g, s := slices.Sorted(slices.Values(fams)), slices.Sorted(slices.Values(l.Families))
		if g, s = slices.Compact(g), slices.Compact(s); !slices.Equal(g, s) {
			diffs = append(diffs, fmt.Sprintf("families [%s] given, the table's are [%s]", strings.Join(g, " "), strings.Join(s, " ")))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("open table %q: %w: %s", name, ErrSchemaMismatch, strings.Join(diffs, "; "))
	}
	return nil
}
