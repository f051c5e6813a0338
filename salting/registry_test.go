package salting

import (
	"slices"
	"strings"
	"testing"
)

// TestRegistryNamesEveryStrategy: the unknown-strategy message lists exactly the registry's names, so
// a strategy added to parsers is also offered to the user.
func TestRegistryNamesEveryStrategy(t *testing.T) {
	listed := strings.FieldsFunc(strategyNames, func(r rune) bool { return r == ',' || r == ' ' })
	listed = slices.DeleteFunc(listed, func(s string) bool { return s == "or" })
	if len(listed) != len(parsers) {
		t.Fatalf("strategyNames lists %d names %q, the registry has %d", len(listed), listed, len(parsers))
	}
	for _, name := range listed {
		if _, ok := parsers[name]; !ok {
			t.Errorf("strategyNames lists %q, which the registry lacks", name)
		}
	}
}
