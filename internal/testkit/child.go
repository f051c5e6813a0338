package testkit

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Child is this test binary run again as a child process that runs one test: how a test gets a
// process it can SIGKILL. Lines carries the child's standard output, line by line, and is closed when
// the output ends; Stderr collects the rest, for failure messages.
type Child struct {
	Cmd    *exec.Cmd
	Lines  <-chan string
	Stderr *strings.Builder
}

// StartChild starts the test binary running only test (a -test.run pattern), with env added to the
// environment.
func StartChild(t testing.TB, test string, env ...string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+test, "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	stderr := new(strings.Builder)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	return &Child{Cmd: cmd, Lines: lines, Stderr: stderr}
}
