// Package hbasetest helps tests and tools that need the real HBase of scripts/hbase/up.sh: it finds
// the server (or skips, or fails under CI), names tables uniquely, and runs the region operations
// the pinned gohbase cannot send (split, flush, major compact, move, close/open a region) through
// scripts/hbase/admin.sh, a small Java program on the server's own classpath.
package hbasetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// EnvZK names the variable holding the test cluster's ZooKeeper quorum.
const EnvZK = "BRINE_HBASE_ZK"

// ZK returns the test cluster's ZooKeeper quorum from $BRINE_HBASE_ZK. Without it the test is skipped,
// unless CI=true: there a missing server must not pass as a green run, so the test fails.
func ZK(tb testing.TB) string {
	tb.Helper()
	zk := os.Getenv(EnvZK)
	if zk != "" {
		return zk
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not set but CI=true: the HBase integration tests need a server "+
			"(start one with `make hbase-up`, or scripts/hbase/up.sh, and export %s=127.0.0.1:2181)", EnvZK, EnvZK)
	}
	tb.Skipf("%s not set; start HBase with `make hbase-up` and export %s=127.0.0.1:2181 to run this test", EnvZK, EnvZK)
	return ""
}

var seq atomic.Int64

// Table returns a table name unique to this process and call, so that runs never collide.
func Table(prefix string) string {
	return fmt.Sprintf("%s_%d_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
}

// Admin runs scripts/hbase/admin.sh against one cluster.
type Admin struct {
	Script string // path of admin.sh
	ZK     string // ZooKeeper quorum, host:port
}

// FindAdmin locates scripts/hbase/admin.sh by walking up from the working directory to the module root.
func FindAdmin(zk string) (*Admin, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		script := filepath.Join(dir, "scripts", "hbase", "admin.sh")
		if _, err := os.Stat(script); err == nil {
			return &Admin{Script: script, ZK: zk}, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, errors.New("hbasetest: scripts/hbase/admin.sh not found above the working directory")
		}
		dir = parent
	}
}

// Regions returns the start keys of table's online regions (the first is empty).
func (a *Admin) Regions(ctx context.Context, table string) ([][]byte, error) {
	out, err := a.run(ctx, "regions", table)
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		k, err := DecodeBinary(line)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// Split splits the region holding key at key and waits until both halves serve.
func (a *Admin) Split(ctx context.Context, table string, key []byte) error {
	_, err := a.run(ctx, "split", table, EncodeBinary(key))
	return err
}

// Flush writes table's memstores to HFiles.
func (a *Admin) Flush(ctx context.Context, table string) error {
	_, err := a.run(ctx, "flush", table)
	return err
}

// MajorCompact major-compacts table and waits until the compaction is over.
func (a *Admin) MajorCompact(ctx context.Context, table string) error {
	_, err := a.run(ctx, "compact", table)
	return err
}

// Move moves the region holding key (with one region server: closes and reopens it) and waits until
// it serves again.
func (a *Admin) Move(ctx context.Context, table string, key []byte) error {
	_, err := a.run(ctx, "move", table, EncodeBinary(key))
	return err
}

// CloseRegion unassigns the region holding key: it serves nothing until OpenRegion.
func (a *Admin) CloseRegion(ctx context.Context, table string, key []byte) error {
	_, err := a.run(ctx, "close", table, EncodeBinary(key))
	return err
}

// OpenRegion assigns the region holding key again and waits until it serves.
func (a *Admin) OpenRegion(ctx context.Context, table string, key []byte) error {
	_, err := a.run(ctx, "open", table, EncodeBinary(key))
	return err
}

func (a *Admin) run(ctx context.Context, args ...string) (string, error) {
	argv := []string{a.Script}
	if a.ZK != "" {
		argv = append(argv, "-zk", a.ZK)
	}
	if dl, ok := ctx.Deadline(); ok {
		argv = append(argv, "-timeout", strconv.Itoa(max(1, int(time.Until(dl).Seconds()))))
	}
	cmd := exec.CommandContext(ctx, "bash", append(argv, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hbasetest: admin.sh %s: %w: %s", strings.Join(args, " "), err, lastLines(stderr.String(), 5))
	}
	return stdout.String(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// EncodeBinary writes key in HBase's binary-string form (Bytes.toBytesBinary reads it back):
// letters and digits as is, every other byte as \xNN.
func EncodeBinary(key []byte) string {
	var sb strings.Builder
	for _, c := range key {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02X`, c)
		}
	}
	return sb.String()
}

// DecodeBinary reads HBase's binary-string form (Bytes.toStringBinary): \xNN is a byte, any other
// character stands for itself.
func DecodeBinary(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			b, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("hbasetest: bad escape in %q: %w", s, err)
			}
			out = append(out, byte(b))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out, nil
}
