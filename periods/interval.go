package periods

import (
	"fmt"
	"time"

	"github.com/brine-kv/brine/client"
)

// Interval is the span of time one period's table holds: a calendar day, an ISO week (Monday to
// Monday), a calendar month, or a fixed duration counted from the Unix epoch. All boundaries are in
// UTC, so every client computes the same tables whatever its time zone.
type Interval struct {
	unit  string        // "day", "week", "month" or "fixed"
	every time.Duration // for "fixed"
}

// ParseInterval parses "day", "week", "month" or a Go duration of at least a second ("6h", "90m").
func ParseInterval(s string) (Interval, error) {
	switch s {
	case "day", "week", "month":
		return Interval{unit: s}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Second || d%time.Second != 0 {
		return Interval{}, fmt.Errorf("%w: period %q: want day, week, month or a whole number of seconds (\"6h\")", client.ErrInvalidArgument, s)
	}
	return Interval{unit: "fixed", every: d}, nil
}

// String is the interval as ParseInterval reads it.
func (iv Interval) String() string {
	if iv.unit == "fixed" {
		return iv.every.String()
	}
	return iv.unit
}

// IsZero reports whether p is the zero Interval (none declared).
func (iv Interval) IsZero() bool { return iv.unit == "" }

// Start is the start of the period holding t.
func (iv Interval) Start(t time.Time) time.Time {
	t = t.UTC()
	y, m, d := t.Date()
	switch iv.unit {
	case "day":
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case "week":
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	case "month":
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
	// Floor division: a time before the epoch belongs to the period that starts before it.
	ms, every := t.UnixMilli(), iv.every.Milliseconds()
	q := ms / every
	if ms%every < 0 {
		q--
	}
	return time.UnixMilli(q * every).UTC()
}

// Next is the start of the period after the one holding t.
func (iv Interval) Next(t time.Time) time.Time {
	s := iv.Start(t)
	switch iv.unit {
	case "day":
		return s.AddDate(0, 0, 1)
	case "week":
		return s.AddDate(0, 0, 7)
	case "month":
		return s.AddDate(0, 1, 0)
	}
	return s.Add(iv.every)
}

// TableName is the table of the period holding t in the period table base: orders_2026_11 (month),
// orders_2026_11_23 (day), orders_2026_w48 (ISO week), orders_20261123_0600 (fixed; with seconds
// when the interval has them).
func (iv Interval) TableName(base string, t time.Time) string {
	s := iv.Start(t)
	switch iv.unit {
	case "day":
		return base + s.Format("_2006_01_02")
	case "week":
		y, w := s.ISOWeek()
		return fmt.Sprintf("%s_%04d_w%02d", base, y, w)
	case "month":
		return base + s.Format("_2006_01")
	}
	if iv.every%time.Minute != 0 {
		return base + s.Format("_20060102_150405")
	}
	return base + s.Format("_20060102_1504")
}
