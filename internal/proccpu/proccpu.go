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
	"syscall"
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

// Machine is the CPU time every processor of this machine has spent so far: busy (user, nice,
// system, irq, softirq, steal) and in all (busy, idle and iowait), from /proc/stat's first line.
// Over a window, busy/all is how saturated the machine was, and busy per row what the whole
// machine (client, servers, kernel) spent per row.
func Machine() (busy, all time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("proccpu: machine CPU: %w", err)
	}
	return parseMachine(b)
}

// parseMachine reads the "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal,
// in clock ticks (guest time is counted in user already).
func parseMachine(b []byte) (busy, all time.Duration, err error) {
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	fields := bytes.Fields(line)
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0, 0, fmt.Errorf("%w: /proc/stat does not start with the cpu line", ErrStat)
	}
	const tick = time.Second / userHZ
	var ticks [8]uint64
	for i := range ticks {
		n, err := strconv.ParseUint(string(fields[1+i]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: /proc/stat: %w", ErrStat, err)
		}
		if n > math.MaxInt64/uint64(tick)/uint64(len(ticks)) { // the sums below stay in range
			return 0, 0, fmt.Errorf("%w: /proc/stat: %d ticks", ErrStat, n)
		}
		ticks[i] = n
	}
	b0 := ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
	a0 := b0 + ticks[3] + ticks[4]
	return time.Duration(b0) * tick, time.Duration(a0) * tick, nil
}

// Self is the CPU time (user and system) this process has used so far, from getrusage: to the
// microsecond, where /proc/PID/stat counts in clock ticks of 10 ms, too coarse for a client that
// spends a few µs per row over tens of thousands of rows.
func Self() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("proccpu: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
