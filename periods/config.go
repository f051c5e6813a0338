package periods

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// Errors of period tables.
var (
	// ErrNoPeriod: a key's time lies in no live period (not created yet, or expired). Nothing was
	// sent for that key.
	ErrNoPeriod = errors.New("periods: key's time is in no live period")
	// ErrExpired: a period's table was dropped while a read used it (retention ran during a scan).
	// The rows yielded before the error are a prefix of the full result.
	ErrExpired = errors.New("periods: period expired during the read")
)

// Keys of a period table's meta. The period table is one small table of its own (named as the
// logical table) whose meta holds the declaration and whose rows list the periods, one row per
// period; each period is a salted table like any other, whose own meta holds its spec. The names
// predate this package and stay, so that tables declared before it open.
const (
	metaInterval  = "brine.partitioned.period"
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
			return Retention{}, fmt.Errorf("%w: retention %q: %s: %w", client.ErrInvalidArgument, s, part, err)
		}
	}
	return r, nil
}

// Config declares a period table: one logical table over one table per period, each with its own
// salting spec.
type Config struct {
	// Interval is how much time one period's table holds; required.
	Interval Interval
	// TimeField is the index of the key field (package keys) that holds the row's time: an Int64 of
	// milliseconds since the Unix epoch, ascending or descending. It need not be the first field.
	TimeField int
	// TimeOf, when set, is used instead of TimeField to find a key's time. A function cannot be
	// stored with the table: it records "func", and every open must pass TimeOf again.
	TimeOf func(key []byte) (time.Time, error)
	// Table is what each period's table is created with unless CreatePeriod is given another;
	// Table.Salter is required. Table.Meta and Table.KeySchema are stored with the period table too.
	Table client.TableConfig
	// Retention is which periods Expire drops.
	Retention Retention
}

func (cfg Config) timeSpec() string {
	if cfg.TimeOf != nil {
		return timeFuncName
	}
	return "field:" + strconv.Itoa(cfg.TimeField)
}

// meta is the declaration as stored in the period table's meta.
func (cfg Config) meta() map[string]string {
	fams := cfg.Table.Families
	if len(fams) == 0 {
		fams = []string{client.DefaultFamily}
	}
	return map[string]string{
		metaInterval: cfg.Interval.String(),
		metaTime:     cfg.timeSpec(),
		metaSalt:     cfg.Table.Salter.Spec(),
		metaRetain:   cfg.Retention.String(),
		metaFamilies: strings.Join(fams, ","),
	}
}

func (cfg Config) validate() error {
	switch {
	case cfg.Interval.IsZero():
		return fmt.Errorf("%w: no interval", client.ErrInvalidArgument)
	case cfg.Table.Salter == nil:
		return fmt.Errorf("%w: no salter for the periods", client.ErrInvalidArgument)
	case cfg.TimeOf == nil && cfg.TimeField < 0:
		return fmt.Errorf("%w: time field %d", client.ErrInvalidArgument, cfg.TimeField)
	case cfg.Retention.Keep < 0 || cfg.Retention.OlderThan < 0:
		return fmt.Errorf("%w: negative retention", client.ErrInvalidArgument)
	}
	for k := range cfg.Table.Meta {
		if k == client.MetaSaltSpec || strings.HasPrefix(k, "brine.partitioned.") || strings.HasPrefix(k, "brine.period.") {
			return fmt.Errorf("%w: Meta key %q is reserved", client.ErrInvalidArgument, k)
		}
	}
	return nil
}

// IsTable reports whether a table's meta is that of a period table (Open opens it by its logical
// name).
func IsTable(meta map[string]string) bool {
	_, ok := meta[metaInterval]
	return ok
}

// configFromMeta rebuilds a declaration from the period table's meta.
func configFromMeta(meta map[string]string, timeOf func([]byte) (time.Time, error)) (Config, error) {
	var cfg Config
	ps, ok := meta[metaInterval]
	if !ok {
		return cfg, fmt.Errorf("%w: not a period table (no %s in its meta)", client.ErrSpecMismatch, metaInterval)
	}
	var err error
	if cfg.Interval, err = ParseInterval(ps); err != nil {
		return cfg, fmt.Errorf("stored interval: %w", err)
	}
	if cfg.Table.Salter, err = salting.ParseStoredSpec(meta[metaSalt]); err != nil {
		return cfg, fmt.Errorf("stored salting spec: %w", err)
	}
	if cfg.Retention, err = ParseRetention(meta[metaRetain]); err != nil {
		return cfg, fmt.Errorf("stored retention: %w", err)
	}
	cfg.Table.Families = strings.Split(meta[metaFamilies], ",")
	switch ts := meta[metaTime]; {
	case ts == timeFuncName && timeOf == nil:
		return cfg, fmt.Errorf("%w: the table finds a key's time with a Go function: pass TimeOf", client.ErrInvalidArgument)
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
