package client

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/salting"
)

// Errors of partitioned tables.
var (
	// ErrNoPeriod: a key's time lies in no live period of a partitioned table (not created yet, or
	// expired). Nothing was sent for that key.
	ErrNoPeriod = errors.New("brine: key's time is in no live period")
	// ErrPeriodExpired: a period's table was dropped while a read used it (retention ran during a
	// scan). The rows yielded before the error are a prefix of the full result.
	ErrPeriodExpired = errors.New("brine: period expired during the read")
)

// Keys of a partitioned table's meta. The partitioned table is one small table of its own (named as
// the logical table) whose meta holds the declaration and whose rows list the periods, one row per
// period; each period is a salted table like any other, whose own meta holds its spec.
const (
	metaPeriod    = "brine.partitioned.period"
	metaTime      = "brine.partitioned.time"
	metaSalt      = "brine.partitioned.salt"
	metaRetain    = "brine.partitioned.retain"
	metaFamilies  = "brine.partitioned.families"
	metaPeriodOf  = "brine.period.of"
	metaPeriodAt  = "brine.period.start"
	timeFuncName  = "func"
	periodRowPfx  = "period/"
	periodRowTime = "2006-01-02T15:04:05Z" // sorts as the time does, for years 0-9999
)

// Retention says which periods are past keeping. Both bounds apply when both are set; the zero value
// keeps everything.
type Retention struct {
	// Keep keeps the newest Keep periods that have started (periods created ahead never count).
	Keep int
	// OlderThan drops periods that ended more than OlderThan ago.
	OlderThan time.Duration
}

func (r Retention) String() string {
	var parts []string
	if r.Keep > 0 {
		parts = append(parts, "keep="+strconv.Itoa(r.Keep))
	}
	if r.OlderThan > 0 {
		parts = append(parts, "older="+r.OlderThan.String())
	}
	return strings.Join(parts, ",")
}

// ParseRetention reads Retention.String's form: "", "keep=12", "older=720h", "keep=12,older=720h".
func ParseRetention(s string) (Retention, error) {
	var r Retention
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		var err error
		switch k {
		case "keep":
			r.Keep, err = strconv.Atoi(v)
			if err == nil && r.Keep < 0 {
				err = errors.New("negative")
			}
		case "older":
			r.OlderThan, err = time.ParseDuration(v)
			if err == nil && r.OlderThan < 0 {
				err = errors.New("negative")
			}
		default:
			err = errors.New("want keep=N or older=DURATION")
		}
		if err != nil {
			return Retention{}, fmt.Errorf("%w: retention %q: %s: %v", backends.ErrInvalidArgument, s, part, err)
		}
	}
	return r, nil
}

// PartitionedConfig declares a partitioned table: one logical table over one physical table per
// period, each with its own salting spec.
type PartitionedConfig struct {
	// Period is how much time one physical table holds; required.
	Period Period
	// TimeField is the index of the key field (package keys) that holds the row's time: an Int64 of
	// milliseconds since the Unix epoch, ascending or descending. It need not be the first field.
	TimeField int
	// TimeOf, when set, is used instead of TimeField to find a key's time. A function cannot be
	// stored with the table: it records "func", and every open must pass TimeOf again.
	TimeOf func(key []byte) (time.Time, error)
	// Table is what each period's table is created with unless CreatePeriod is given another;
	// Table.Salter is required. Table.Meta is stored with the partitioned table as well.
	Table TableConfig
	// Retention is which periods Expire drops.
	Retention Retention
}

func (cfg PartitionedConfig) timeSpec() string {
	if cfg.TimeOf != nil {
		return timeFuncName
	}
	return "field:" + strconv.Itoa(cfg.TimeField)
}

func (cfg PartitionedConfig) meta() map[string]string {
	fams := cfg.Table.Families
	if len(fams) == 0 {
		fams = []string{DefaultFamily}
	}
	return map[string]string{
		MetaSaltSpec: "none", // the partitioned table's own rows are the unsalted period list
		metaPeriod:   cfg.Period.String(),
		metaTime:     cfg.timeSpec(),
		metaSalt:     cfg.Table.Salter.Spec(),
		metaRetain:   cfg.Retention.String(),
		metaFamilies: strings.Join(fams, ","),
	}
}

func (cfg PartitionedConfig) validate() error {
	switch {
	case cfg.Period.IsZero():
		return fmt.Errorf("%w: no period", backends.ErrInvalidArgument)
	case cfg.Table.Salter == nil:
		return fmt.Errorf("%w: no salter for the periods", backends.ErrInvalidArgument)
	case cfg.TimeOf == nil && cfg.TimeField < 0:
		return fmt.Errorf("%w: time field %d", backends.ErrInvalidArgument, cfg.TimeField)
	case cfg.Retention.Keep < 0 || cfg.Retention.OlderThan < 0:
		return fmt.Errorf("%w: negative retention", backends.ErrInvalidArgument)
	}
	if _, err := cfg.Table.keySchema(); err != nil {
		return err
	}
	for k := range cfg.Table.Meta {
		if k == MetaSaltSpec || strings.HasPrefix(k, "brine.partitioned.") || strings.HasPrefix(k, "brine.period.") {
			return fmt.Errorf("%w: Meta key %q is reserved", backends.ErrInvalidArgument, k)
		}
	}
	return nil
}

// IsPartitioned reports whether a table's meta is that of a partitioned table (OpenPartitioned opens
// it by its logical name).
func IsPartitioned(meta map[string]string) bool {
	_, ok := meta[metaPeriod]
	return ok
}

// configFromMeta rebuilds a declaration from the partitioned table's meta.
func configFromMeta(meta map[string]string, timeOf func([]byte) (time.Time, error)) (PartitionedConfig, error) {
	var cfg PartitionedConfig
	ps, ok := meta[metaPeriod]
	if !ok {
		return cfg, fmt.Errorf("%w: not a partitioned table (no %s in its meta)", ErrSpecMismatch, metaPeriod)
	}
	var err error
	if cfg.Period, err = ParsePeriod(ps); err != nil {
		return cfg, fmt.Errorf("stored period: %w", err)
	}
	if cfg.Table.Salter, err = salting.ParseSpec(meta[metaSalt]); err != nil {
		return cfg, fmt.Errorf("stored salting spec: %w", err)
	}
	if cfg.Retention, err = ParseRetention(meta[metaRetain]); err != nil {
		return cfg, fmt.Errorf("stored retention: %w", err)
	}
	cfg.Table.Families = strings.Split(meta[metaFamilies], ",")
	switch ts := meta[metaTime]; {
	case ts == timeFuncName && timeOf == nil:
		return cfg, fmt.Errorf("%w: the table finds a key's time with a Go function: pass TimeOf", backends.ErrInvalidArgument)
	case ts == timeFuncName:
		cfg.TimeOf = timeOf
	case strings.HasPrefix(ts, "field:"):
		if cfg.TimeField, err = strconv.Atoi(ts[len("field:"):]); err != nil {
			return cfg, fmt.Errorf("stored time field %q: %w", ts, err)
		}
	default:
		return cfg, fmt.Errorf("stored time field %q: unknown", ts)
	}
	return cfg, nil
}
