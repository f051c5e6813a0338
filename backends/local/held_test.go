package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/internal/testkit"
)

// envHold names the file TestHoldStoreChild holds open, as another process.
const envHold = "BRINE_LOCAL_TEST_HOLD"

// TestHoldStoreChild is the child process of TestSecondOpenSaysWhere: it opens the file, says so,
// and holds it until killed.
func TestHoldStoreChild(t *testing.T) {
	path := os.Getenv(envHold)
	if path == "" {
		t.Skip("the child of TestSecondOpenSaysWhere")
	}
	s, err := local.Open(context.Background(), local.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	os.Stdout.WriteString("held\n")
	time.Sleep(time.Minute)
}

// A second Open of a file held open fails with ErrLocked and says who holds it: this process, through
// another Backend, or another process. Once this process's Backend is closed, the file opens again.
func TestSecondOpenSaysWhere(t *testing.T) {
	tests := []struct {
		name string
		hold func(t *testing.T, path string) (release func())
		want string
	}{
		{"this process", holdHere, "this process has it open through another Backend"},
		{"this process, read-only holder", func(t *testing.T, path string) func() {
			release := holdHere(t, path)
			release()
			r, err := local.Open(context.Background(), local.Config{Path: path, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			return func() { r.Close() }
		}, "this process has it open through another Backend"},
		{"another process", holdInChild, "another process has it open"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "brine.db")
			release := tc.hold(t, path)
			_, err := local.Open(context.Background(), local.Config{Path: path, LockTimeout: 50 * time.Millisecond})
			if !errors.Is(err, local.ErrLocked) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("second Open: %v; want ErrLocked saying %q", err, tc.want)
			}
			release()
			s, err := local.Open(context.Background(), local.Config{Path: path, LockTimeout: 5 * time.Second})
			if err != nil {
				t.Fatalf("Open once released: %v", err)
			}
			s.Close()
		})
	}
}

func holdHere(t *testing.T, path string) func() {
	s, err := local.Open(context.Background(), local.Config{Path: path, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return func() { s.Close() }
}

func holdInChild(t *testing.T, path string) func() {
	child := testkit.StartChild(t, "^TestHoldStoreChild$", envHold+"="+path)
	kill := func() {
		_ = child.Cmd.Process.Kill()
		_ = child.Cmd.Wait()
	}
	if line, ok := <-child.Lines; !ok || line != "held" {
		kill()
		t.Fatalf("child said %q (%v): %s", line, ok, child.Stderr)
	}
	return kill
}
