package hbasetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Session is one long-lived admin.sh process in "serve" mode: one JVM and one HBase connection for
// many region operations (a JVM per operation costs seconds of CPU, too much for a chaos loop on a
// small machine). Safe for concurrent use; operations run one at a time.
type Session struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr strings.Builder
}

// Session starts admin.sh serve against a.ZK. Close it when done.
func (a *Admin) Session() (*Session, error) {
	argv := []string{a.Script}
	if a.ZK != "" {
		argv = append(argv, "-zk", a.ZK)
	}
	s := &Session{cmd: exec.Command("bash", append(argv, "serve")...)}
	s.cmd.Stderr = &s.stderr
	in, err := s.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("hbasetest: admin.sh serve: %w", err)
	}
	s.stdin, s.stdout = in, bufio.NewReader(out)
	return s, nil
}

// Close ends the admin process.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.stdin.Close()
	err := s.cmd.Wait()
	if err != nil {
		return fmt.Errorf("hbasetest: admin.sh serve: %w: %s", err, lastLines(s.stderr.String(), 5))
	}
	return nil
}

// Do runs one command ("split TABLE KEY", ...; keys in EncodeBinary form) and returns its output
// lines. ctx bounds the operation on the server side (the command's own timeout) only: a command
// cannot be abandoned half-way, since the next one would read its reply.
func (s *Session) Do(ctx context.Context, args ...string) ([]string, error) {
	timeout := 120
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(1, int(time.Until(dl).Seconds()))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintf(s.stdin, "%d %s\n", timeout, strings.Join(args, " ")); err != nil {
		return nil, fmt.Errorf("hbasetest: admin %s: %w: %s", args[0], err, lastLines(s.stderr.String(), 5))
	}
	var lines []string
	for {
		line, err := s.stdout.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("hbasetest: admin %s: %w: %s", args[0], err, lastLines(s.stderr.String(), 5))
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "= "):
			lines = append(lines, line[2:])
		case line == "OK":
			return lines, nil
		case strings.HasPrefix(line, "ERR "):
			return nil, fmt.Errorf("hbasetest: admin %s: %w: %s", strings.Join(args, " "), ErrAdmin, line[4:])
		default:
			return nil, fmt.Errorf("hbasetest: admin %s: unexpected line %q", args[0], line)
		}
	}
}

// ErrAdmin marks an operation the server refused or that failed there.
var ErrAdmin = errors.New("admin operation failed")

// RegionLoc is one online region: where it starts, which server holds it, and that server's request
// counters for it.
type RegionLoc struct {
	Start         []byte
	Server        string // host,port,startcode
	Reads, Writes int64
}

// Locate lists table's online regions in key order, with their servers' own request counters.
func (s *Session) Locate(ctx context.Context, table string) ([]RegionLoc, error) {
	lines, err := s.Do(ctx, "locate", table)
	if err != nil {
		return nil, err
	}
	locs := make([]RegionLoc, 0, len(lines))
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("hbasetest: locate %s: bad line %q", table, l)
		}
		start, err := DecodeBinary(f[0])
		if err != nil {
			return nil, err
		}
		r, err1 := strconv.ParseInt(f[2], 10, 64)
		w, err2 := strconv.ParseInt(f[3], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("hbasetest: locate %s: %w", table, err)
		}
		locs = append(locs, RegionLoc{Start: start, Server: f[1], Reads: r, Writes: w})
	}
	return locs, nil
}

// Servers lists the live region servers (host,port,startcode).
func (s *Session) Servers(ctx context.Context) ([]string, error) { return s.Do(ctx, "servers") }

// MoveTo moves the region holding key to server ("host,port") and waits until it serves there.
func (s *Session) MoveTo(ctx context.Context, table string, key []byte, server string) error {
	_, err := s.Do(ctx, "moveto", table, EncodeBinary(key), server)
	return err
}

// Merge merges the region holding key with the next one and waits until the result serves.
func (s *Session) Merge(ctx context.Context, table string, key []byte) error {
	_, err := s.Do(ctx, "merge", table, EncodeBinary(key))
	return err
}

// Split splits the region holding key at key and waits until both halves serve.
func (s *Session) Split(ctx context.Context, table string, key []byte) error {
	_, err := s.Do(ctx, "split", table, EncodeBinary(key))
	return err
}

// Flush writes table's memstores to HFiles.
func (s *Session) Flush(ctx context.Context, table string) error {
	_, err := s.Do(ctx, "flush", table)
	return err
}

// MajorCompact major-compacts table and waits until the compaction is over.
func (s *Session) MajorCompact(ctx context.Context, table string) error {
	_, err := s.Do(ctx, "compact", table)
	return err
}

// Balance runs the balancer once and reports whether it ran.
func (s *Session) Balance(ctx context.Context) (bool, error) {
	lines, err := s.Do(ctx, "balance")
	return err == nil && len(lines) == 1 && lines[0] == "ran", err
}
