package proccpu

import (
	"errors"
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		name, line string
		want       time.Duration
		err        bool
	}{
		{"java", "15212 (java) S 1 15211 15211 0 -1 4194560 91357 0 12 0 5234 1207 0 0 20 0 93 0 41 4868739072 151826 184467 1 1", 64410 * time.Millisecond, false},
		{"command with spaces and parentheses", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 250 50 0 0 20 0 1 0 1 0 0", 3 * time.Second, false},
		{"no command", "7 R 1 7 7", 0, true},
		{"short", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 250", 0, true},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 2x5 50 0", 0, true},
		{"overflow", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 18446744073709551615 0 0", 0, true},
		{"empty", "", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.line))
			if tc.err {
				if !errors.Is(err, ErrStat) {
					t.Fatalf("err %v, want ErrStat", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestUsedOwnProcess reads this test process's own CPU time, which a busy loop moves on.
func TestUsedOwnProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system") // the benchmarks read server CPU only on Linux
	}
	before, err := Used(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Busy until the kernel's own account (getrusage: Self) says 100 ms of CPU went by, not 100 ms
	// of wall time: on a loaded machine the loop may get a fraction of a core.
	spent, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 30*time.Second; {
		now, err := Self()
		if err != nil {
			t.Fatal(err)
		}
		if now-spent >= 100*time.Millisecond {
			break
		}
	}
	after, err := Used(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// /proc counts in clock ticks (10 ms): well above 50 ms after 100 ms of the process's CPU.
	if d := after - before; d < 50*time.Millisecond {
		t.Fatalf("100 ms of CPU by getrusage read as %v by /proc", d)
	}
	// Self counts finer than /proc, and the same CPU: 1 ms of CPU moves it by about 1 ms.
	s0, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	for {
		s1, err := Self()
		if err != nil {
			t.Fatal(err)
		}
		if d := s1 - s0; d >= time.Millisecond {
			if d > 20*time.Millisecond {
				t.Fatalf("Self moved by %v for a loop that stops at 1 ms of CPU", d)
			}
			break
		}
	}
	if _, err := Used(-1); err == nil {
		t.Fatal("no error for a pid that does not exist")
	}
	if d, err := Used(); d != 0 || err != nil {
		t.Fatalf("no pids: %v, %v; want 0, nil", d, err)
	}
}

func TestPerRow(t *testing.T) {
	if got := PerRow(3*time.Millisecond, 1000); got != 3 {
		t.Errorf("PerRow(3ms, 1000) = %v µs, want 3", got)
	}
	if got := PerRow(time.Second, 0); got != 0 {
		t.Errorf("PerRow(1s, 0) = %v, want 0", got)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("15212 (java) S 1 15211 15211 0 -1 4194560 91357 0 12 0 5234 1207 0 0 20 0"))
	f.Add([]byte("1 ((x)) R"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := parseStat(b); err == nil && d < 0 {
			t.Fatalf("negative CPU time %v", d)
		}
	})
}

func TestParseMachine(t *testing.T) {
	cases := []struct {
		name, text string
		busy, all  time.Duration
		err        bool
	}{
		{"two cores", "cpu  23311 5 11706 73026 1852 1 433 17 0 0\ncpu0 11177 0 4891 39118 205 0 64 6 0 0\n",
			(23311 + 5 + 11706 + 1 + 433 + 17) * 10 * time.Millisecond, (23311 + 5 + 11706 + 73026 + 1852 + 1 + 433 + 17) * 10 * time.Millisecond, false},
		{"old kernel, eight fields", "cpu 100 0 100 800 0 0 0 0\n", 2 * time.Second, 10 * time.Second, false},
		{"per-cpu line first", "cpu0 1 2 3 4 5 6 7 8\n", 0, 0, true},
		{"short", "cpu 1 2 3 4\n", 0, 0, true},
		{"not a number", "cpu 1 2 x 4 5 6 7 8\n", 0, 0, true},
		{"overflow", "cpu 18446744073709551615 0 0 0 0 0 0 0\n", 0, 0, true},
		{"empty", "", 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			busy, all, err := parseMachine([]byte(tc.text))
			if tc.err {
				if !errors.Is(err, ErrStat) {
					t.Fatalf("err %v, want ErrStat", err)
				}
				return
			}
			if err != nil || busy != tc.busy || all != tc.all {
				t.Fatalf("got %v, %v, %v; want %v, %v", busy, all, err, tc.busy, tc.all)
			}
		})
	}
}

// The machine's own counters move forward, busy never past all.
func TestMachine(t *testing.T) {
	b0, a0, err := Machine()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) { // spin: some busy time to count
	}
	b1, a1, err := Machine()
	if err != nil {
		t.Fatal(err)
	}
	if b1 < b0 || a1 < a0 || b0 > a0 || b1 > a1 {
		t.Fatalf("busy %v -> %v, all %v -> %v", b0, b1, a0, a1)
	}
}
