// Package proccpu reads how much CPU processes of this machine have used, from Linux's /proc: the
// benchmarks' measure of what a store's server spends per row, beside their rows/s.
package proccpu

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ): 100 on every Linux architecture Go
// builds for.
const userHZ = 100

// ErrStat: a /proc/PID/stat line this package cannot read.
var ErrStat = errors.New("proccpu: malformed /proc/PID/stat")

// Used is the CPU time (user and system) the processes pids have used so far, summed; 0 for none.
func Used(pids ...int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, fmt.Errorf("proccpu: CPU of process %d: %w", pid, err)
		}
		t, err := parseStat(b)
		if err != nil {
			return 0, fmt.Errorf("process %d: %w", pid, err)
		}
		total += t
	}
	return total, nil
}

// PerRow is CPU time over rows, in µs per row (0 for no rows).
func PerRow(cpu time.Duration, rows int) float64 {
	if rows <= 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(rows)
}

// parseStat returns utime + stime of a /proc/PID/stat line (fields 14 and 15, in clock ticks).
// Field 2, the command, is in parentheses and may itself hold spaces and parentheses, so fields
// are counted from after its last ')'.
func parseStat(b []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, ErrStat
	}
	fields := bytes.Fields(b[end+1:]) // fields 3 (state) onwards
	if len(fields) < 13 {
		return 0, fmt.Errorf("%w: %d fields after the command", ErrStat, len(fields))
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrStat, err)
		}
		ticks += n
	}
	const tick = time.Second / userHZ
	if ticks > math.MaxInt64/uint64(tick) {
		return 0, fmt.Errorf("%w: %d ticks", ErrStat, ticks)
	}
	return time.Duration(ticks) * tick, nil
}
