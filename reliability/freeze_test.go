package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/wait"
)

// errNoFreeze: the kernel did not freeze a container's processes in time (runc: "unable to freeze"),
// as happens under load while some are in uninterruptible sleep; runc thaws them again.
var errNoFreeze = errors.New("container not frozen")

// freezeTries is how many times pauseRetrying tries a pause the kernel does not freeze in time.
const freezeTries = 3

// pauseRetrying runs pause, trying again `every` later, up to freezeTries times in all, when the
// kernel does not freeze the container in time: a fault of the machine, not one the chaos test
// injects. Each failed try is logged, so a run's log shows the retries and not only their end;
// after the last it fails with errNoFreeze.
func pauseRetrying(ctx context.Context, what string, every time.Duration, pause func(context.Context) error, logf func(format string, args ...any)) error {
	var err error
	for try := 1; try <= freezeTries; try++ {
		if err = pause(ctx); err == nil || !strings.Contains(err.Error(), "unable to freeze") {
			return err
		}
		if try == freezeTries {
			break
		}
		logf("pause of %s not frozen in time (try %d of %d: %v): trying again in %v", what, try, freezeTries, err, every)
		if err := wait.Sleep(ctx, every); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: %d tries: %w", errNoFreeze, freezeTries, err)
}

func TestPauseRetrying(t *testing.T) {
	frozen := errors.New(`hbasetest: cluster.sh rs pause 2: exit status 1: Error response from daemon: OCI runtime pause failed: unable to freeze`)
	other := errors.New("hbasetest: cluster.sh rs pause 2: rs2 is exited; nothing to pause")
	tests := []struct {
		name    string
		results []error // what each try returns
		tries   int
		logged  int
		want    error // nil, errNoFreeze, or the error itself
	}{
		{"frozen at once", []error{nil}, 1, 0, nil},
		{"frozen on the second try", []error{frozen, nil}, 2, 1, nil},
		{"frozen on the last try", []error{frozen, frozen, nil}, 3, 2, nil},
		{"never frozen", []error{frozen, frozen, frozen}, 3, 2, errNoFreeze},
		{"another failure", []error{other}, 1, 0, other},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			pause := func(context.Context) error {
				tries++
				return tc.results[tries-1]
			}
			var logs []string
			logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
			err := pauseRetrying(t.Context(), "rs2", time.Millisecond, pause, logf)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("pauseRetrying = %v, want %v", err, tc.want)
			}
			if tries != tc.tries || len(logs) != tc.logged {
				t.Errorf("%d tries and %d log lines %q, want %d and %d", tries, len(logs), logs, tc.tries, tc.logged)
			}
			for i, l := range logs {
				if want := fmt.Sprintf("pause of rs2 not frozen in time (try %d of 3: ", i+1); !strings.HasPrefix(l, want) {
					t.Errorf("log line %q, want it to start %q", l, want)
				}
			}
		})
	}
}
