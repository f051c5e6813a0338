package bench

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
// builds for except alpha, which it does not.
const userHZ = 100

// errProcStat: a /proc/PID/stat line this parser cannot read.
var errProcStat = errors.New("bench: malformed /proc/PID/stat")

// serverCPU is the CPU time (user and system) the store's server processes of Config.ServerPIDs have
// used so far, read from /proc; 0 when none is given. The bulk sections take it before and after
// each timed run: a conditional row's cost is the server's (a lock and a read per row), which the
// client's own figures do not show.
func (r *runner) serverCPU() (time.Duration, error) {
	var total time.Duration
	for _, pid := range r.cfg.ServerPIDs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, fmt.Errorf("bench: CPU of server process %d: %w", pid, err)
		}
		t, err := parseProcStat(b)
		if err != nil {
			return 0, fmt.Errorf("process %d: %w", pid, err)
		}
		total += t
	}
	return total, nil
}

// parseProcStat returns utime + stime of a /proc/PID/stat line (fields 14 and 15, in clock ticks).
// Field 2, the command, is in parentheses and may itself hold spaces and parentheses, so fields
// are counted from after its last ')'.
func parseProcStat(b []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, errProcStat
	}
	fields := bytes.Fields(b[end+1:]) // fields 3 (state) onwards
	if len(fields) < 13 {
		return 0, fmt.Errorf("%w: %d fields after the command", errProcStat, len(fields))
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", errProcStat, err)
		}
		ticks += n
	}
	const tick = time.Second / userHZ
	if ticks > math.MaxInt64/uint64(tick) {
		return 0, fmt.Errorf("%w: %d ticks", errProcStat, ticks)
	}
	return time.Duration(ticks) * tick, nil
}

// perRow is CPU time over rows, in µs per row.
func perRow(cpu time.Duration, rows int) float64 {
	if rows <= 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / float64(rows)
}
