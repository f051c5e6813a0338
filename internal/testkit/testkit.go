// Package testkit holds the helpers that tests of several packages share, so that each exists once.
package testkit

import (
	"testing"

	"github.com/brine-kv/brine/salting"
)

// Salter parses a salting spec, failing the test on a bad one.
func Salter(t testing.TB, spec string) salting.Salter {
	t.Helper()
	s, err := salting.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
