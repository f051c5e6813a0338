// Package filterstate carries what a backends.Filter holds beyond its exported fields: the pattern
// its constructor compiled, and the key text package client binds for row-key leaves. Package
// backends keeps them unexported, so that the Filter a user of package client sees has data and
// constructors only; driverkit, which evaluates filters, reads them through Of. The bridge is an
// internal package because Go lets no other package read an unexported field.
package filterstate

import "regexp"

// State is the unexported part of a backends.Filter node.
type State struct {
	// Re is the compiled Pattern of a regex leaf, set by its constructor only: driverkit refuses a
	// hand-built regex leaf, which has none.
	Re *regexp.Regexp
	// KeyText is what a row-key leaf matches for a key (driverkit.WithKeyText); nil: the key itself.
	KeyText func(key []byte) ([]byte, bool)
}

// Of returns the State of f, a *backends.Filter; package backends sets it when it loads.
var Of func(f any) *State
