package backends

import (
	"context"
	"errors"
	"time"
)

// ErrNotTunable: the store has no per-table capacity or lifetime to change (see Tuner).
var ErrNotTunable = errors.New("brine: the store cannot tune a table's throughput or lifetime")

// Tuning is what a store that prices or expires whole tables can change on a live one: the
// Tablestore guide gives the current period's table a high reserved throughput and older ones less,
// and lets old data expire by the table's TTL. A negative field leaves that setting as it is.
type Tuning struct {
	// ReadCU and WriteCU are the reserved read and write capacity units.
	ReadCU, WriteCU int
	// TTL is how long data lives after its timestamp, in whole seconds; 0 means forever.
	TTL time.Duration
}

// Keep is a Tuning that changes nothing; set the fields to change on a copy.
var Keep = Tuning{ReadCU: -1, WriteCU: -1, TTL: -1}

// Tuner is implemented by drivers whose tables have a reserved throughput and a table-wide TTL
// (Tablestore). HBase's TTL and compression are per family and set at creation (FamilyOptions). It
// is optional: client.TuneTable fails with ErrNotTunable on a driver without it, and the conformance
// suite skips its tests there.
type Tuner interface {
	// Tune changes the settings t names on a live table (a negative field leaves one as it is), and
	// nothing else: the table keeps its rows. A TTL that is not whole seconds fails with
	// ErrInvalidArgument; a table that is not there, with ErrTableNotFound (a Tuning that changes
	// nothing may succeed without asking the store).
	Tune(ctx context.Context, table string, t Tuning) error
}
