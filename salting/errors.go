package salting

import "errors"

// Sentinel errors; every error of this package wraps one of them. They are the salting package's own
// (it does not depend on the backends); the client maps ErrInvalidKey to backends.ErrInvalidKey.
var (
	// ErrInvalidSpec: ParseSpec or ParseStoredSpec could not parse a spec, or a parameter is out of range.
	ErrInvalidSpec = errors.New("salting: invalid spec")
	// ErrInvalidKey: a logical key the salter cannot place (empty, too short for the bytes the
	// strategy reads, or not a keys-encoded key with the fields it reads).
	ErrInvalidKey = errors.New("salting: invalid key")
	// ErrInvalidPhysicalKey: a physical key this salter did not produce.
	ErrInvalidPhysicalKey = errors.New("salting: invalid physical key")
	// ErrUnorderedRange: a logical range whose rows the key transform (reverse) does not keep in
	// order, so it cannot be scanned as physical ranges and merged.
	ErrUnorderedRange = errors.New("salting: range cannot be mapped in key order")
	// ErrSpecMismatch: a table was opened with a salting spec other than the one stored with it.
	ErrSpecMismatch = errors.New("salting: spec does not match the table's")
	// ErrNoSpec: the table has no salting spec stored with it (brine did not create it), none was
	// given, and the caller did not ask for such tables to be read unsalted.
	ErrNoSpec = errors.New("salting: table has no stored spec")
)
