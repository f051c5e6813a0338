package periods_test

import (
	"errors"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/periods"
)

func TestInterval(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		period, at, start, next, table string
	}{
		{"month", "2026-11-30T23:59:59.999Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "o_2026_11"},
		{"month", "2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z", "o_2026_12"},
		// Another zone: the boundary is UTC's.
		{"month", "2026-12-01T07:00:00+08:00", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "o_2026_11"},
		{"day", "2026-11-23T16:15:00Z", "2026-11-23T00:00:00Z", "2026-11-24T00:00:00Z", "o_2026_11_23"},
		// ISO weeks start on Monday; 2026-11-23 is one, and 2027-01-01 lies in week 53 of 2026.
		{"week", "2026-11-29T23:59:59.999Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z", "o_2026_w48"},
		{"week", "2027-01-01T12:00:00Z", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z", "o_2026_w53"},
		{"6h", "2026-11-23T17:59:59.999Z", "2026-11-23T12:00:00Z", "2026-11-23T18:00:00Z", "o_20261123_1200"},
		{"90s", "2026-11-23T00:01:31Z", "2026-11-23T00:01:30Z", "2026-11-23T00:03:00Z", "o_20261123_000130"},
		// Before the epoch, a fixed period still starts at or before the time.
		{"1h", "1969-12-31T23:30:00Z", "1969-12-31T23:00:00Z", "1970-01-01T00:00:00Z", "o_19691231_2300"},
	} {
		p, err := periods.ParseInterval(tc.period)
		if err != nil {
			t.Fatal(err)
		}
		tm := at(tc.at)
		if got := p.Start(tm); !got.Equal(at(tc.start)) {
			t.Errorf("%s Start(%s) = %s, want %s", tc.period, tc.at, got, tc.start)
		}
		if got := p.Next(tm); !got.Equal(at(tc.next)) {
			t.Errorf("%s Next(%s) = %s, want %s", tc.period, tc.at, got, tc.next)
		}
		if got := p.TableName("o", tm); got != tc.table {
			t.Errorf("%s TableName(%s) = %s, want %s", tc.period, tc.at, got, tc.table)
		}
		if back, err := periods.ParseInterval(p.String()); err != nil || back != p {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", p.String(), back, err, p)
		}
	}
	for _, bad := range []string{"", "year", "500ms", "1.5s", "-1h"} {
		if _, err := periods.ParseInterval(bad); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("ParseInterval(%q): %v, want ErrInvalidArgument", bad, err)
		}
	}
	for _, tc := range []struct {
		in   string
		want periods.Retention
		ok   bool
	}{
		{"", periods.Retention{}, true},
		{"keep=12", periods.Retention{Keep: 12}, true},
		{"keep=3,older=720h", periods.Retention{Keep: 3, OlderThan: 720 * time.Hour}, true},
		{"keep=-1", periods.Retention{}, false},
		{"older=soon", periods.Retention{}, false},
		{"drop=1", periods.Retention{}, false},
	} {
		got, err := periods.ParseRetention(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRetention(%q) = %+v, %v", tc.in, got, err)
		}
		if tc.ok {
			if back, err := periods.ParseRetention(got.String()); err != nil || back != got {
				t.Errorf("ParseRetention(String()) = %+v, %v; want %+v", back, err, got)
			}
		}
	}
}
