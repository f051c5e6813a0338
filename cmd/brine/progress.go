package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brine-kv/brine/client"
)

// progress shows an import's advance: a bar with rate and ETA on a terminal, a log line every few
// seconds otherwise (so CI logs stay readable).
type progress struct {
	w        io.Writer
	size     int64
	consumed *int64
	tty      bool
	lastLog  time.Time
	shown    atomic.Bool
}

func newProgress(w io.Writer, size int64, consumed *int64) *progress {
	p := &progress{w: w, size: size, consumed: consumed, lastLog: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(s client.ImportStats) {
	frac := -1.0
	if p.size > 0 {
		// The reader runs ahead of the writers by at most the pending batches; close enough for an ETA.
		frac = min(1, float64(atomic.LoadInt64(p.consumed))/float64(p.size))
	}
	if p.tty {
		p.shown.Store(true)
		line := fmt.Sprintf("%d rows, %.0f rows/s, %d failed", s.Written, s.RowsPerSecond(), s.Failed)
		if frac >= 0 {
			bar := int(frac * 30)
			eta := "?"
			if frac > 0 {
				eta = (time.Duration(float64(s.Elapsed) * (1 - frac) / frac)).Round(time.Second).String()
			}
			line = fmt.Sprintf("[%s%s] %3.0f%% %s, ETA %s", strings.Repeat("#", bar), strings.Repeat(".", 30-bar), 100*frac, line, eta)
		}
		fmt.Fprintf(p.w, "\r%-100s", line)
		return
	}
	if time.Since(p.lastLog) >= 5*time.Second {
		p.lastLog = time.Now()
		fmt.Fprintf(p.w, "import: %d written, %d failed, %.0f rows/s\n", s.Written, s.Failed, s.RowsPerSecond())
	}
}

func (p *progress) finish() {
	if p.shown.Load() {
		fmt.Fprintln(p.w)
	}
}
