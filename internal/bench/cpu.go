package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/brine-kv/brine/internal/proccpu"
	"github.com/brine-kv/brine/internal/wait"
)

// cpuSample is the machine's CPU (Linux /proc) and this process's (getrusage) at one moment; ok is false where
// /proc cannot be read, and a window from it is left out of the figures.
type cpuSample struct {
	busy, all, self time.Duration
	ok              bool
}

func sampleCPU() cpuSample {
	busy, all, err := proccpu.Machine()
	if err != nil {
		return cpuSample{}
	}
	self, err := proccpu.Self()
	if err != nil {
		return cpuSample{}
	}
	return cpuSample{busy: busy, all: all, self: self, ok: true}
}

// CPUUse is what a measure cost the machine per row: on a machine whose cores are all busy
// (Busy near 1), rows/s are the cores over MachinePerRow, so two measures' rows/s stand in the
// inverse ratio of their CPU per row, whatever overlaps inside each.
type CPUUse struct {
	MachinePerRow float64 `json:"machine_cpu_us_per_row"` // every process: client, servers, kernel
	ClientPerRow  float64 `json:"client_cpu_us_per_row"`  // this process
	Busy          float64 `json:"machine_busy"`           // busy over all CPU time in the window
}

// use is the window from s to e over rows; ok is false when either sample is missing or the
// window is too short for /proc's clock ticks.
func (s cpuSample) use(e cpuSample, rows int) (CPUUse, bool) {
	if !s.ok || !e.ok || e.all <= s.all || rows <= 0 {
		return CPUUse{}, false
	}
	return CPUUse{
		MachinePerRow: proccpu.PerRow(e.busy-s.busy, rows),
		ClientPerRow:  proccpu.PerRow(e.self-s.self, rows),
		Busy:          float64(e.busy-s.busy) / float64(e.all-s.all),
	}, true
}

// medianUse is the median of each figure over the windows (zero for none).
func medianUse(us []CPUUse) CPUUse {
	var m, c, b []float64
	for _, u := range us {
		m, c, b = append(m, u.MachinePerRow), append(c, u.ClientPerRow), append(b, u.Busy)
	}
	return CPUUse{MachinePerRow: Median(m), ClientPerRow: Median(c), Busy: Median(b)}
}

// cell prints u for a markdown table: machine µs per row, the client's part, and how busy the
// machine was.
func (u CPUUse) cell() string {
	if u.MachinePerRow == 0 {
		return "– | – | –"
	}
	return fmt.Sprintf("%.1f | %.1f | %.0f%%", u.MachinePerRow, u.ClientPerRow, 100*u.Busy)
}

// Settling before a measure: the server work one measure leaves behind (HBase's memstore flushes
// and compactions, the JVM's collections) would otherwise be charged to the next, and which measure
// comes next rotates with the repeat.
const (
	settleBusy   = 0.10                   // the machine counts as quiet below this share busy
	settleWindow = 500 * time.Millisecond // for this long
)

// settle waits until the machine has been quiet for settleWindow, or Config.Settle has passed, and
// logs how long it waited; without /proc it returns at once.
func (r *runner) settle(ctx context.Context) {
	if r.cfg.Settle <= 0 {
		return
	}
	began := time.Now()
	prev := sampleCPU()
	for prev.ok && time.Since(began) < r.cfg.Settle {
		if wait.Sleep(ctx, settleWindow) != nil {
			break
		}
		cur := sampleCPU()
		if used, ok := prev.use(cur, 1); ok && used.Busy < settleBusy {
			r.log.Debug("bench: machine quiet", "waited", time.Since(began).Round(time.Millisecond))
			return
		}
		prev = cur
	}
	r.log.Info("bench: the machine stayed busy; measuring anyway", "waited", time.Since(began).Round(time.Millisecond))
}
