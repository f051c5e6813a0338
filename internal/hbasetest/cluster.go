package hbasetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// EnvClusterZK names the variable holding the ZooKeeper quorum of the multi-server cluster of
// scripts/hbase/cluster.sh (make cluster-up).
const EnvClusterZK = "BRINE_HBASE_CLUSTER_ZK"

// Cluster controls the servers of scripts/hbase/cluster.sh: stop, kill, pause and start each region
// server, restart the master.
type Cluster struct {
	ZK     string
	Script string // path of cluster.sh
	Admin  *Admin
}

// FindCluster returns the cluster at $BRINE_HBASE_CLUSTER_ZK. Without it the test is skipped, unless
// CI=true: there a missing cluster must not pass as a green run, so the test fails.
func FindCluster(tb testing.TB) *Cluster {
	tb.Helper()
	zk := os.Getenv(EnvClusterZK)
	if zk == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set but CI=true: the multi-server tests need the cluster (make cluster-up, then export %s=127.0.0.1:2481)",
				EnvClusterZK, EnvClusterZK)
		}
		tb.Skipf("%s not set; start the cluster with `make cluster-up` and export %s=127.0.0.1:2481", EnvClusterZK, EnvClusterZK)
	}
	a, err := FindAdmin(zk)
	if err != nil {
		tb.Fatal(err)
	}
	return &Cluster{ZK: zk, Script: filepath.Join(filepath.Dir(a.Script), "cluster.sh"), Admin: a}
}

// RegionServers is how many region servers the cluster was started with ($HBASE_REGIONSERVERS, 3).
func (c *Cluster) RegionServers() int {
	if n, err := strconv.Atoi(os.Getenv("HBASE_REGIONSERVERS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// StopRS stops region server n (1-based) gracefully: SIGTERM, its shutdown hook closes its regions.
func (c *Cluster) StopRS(ctx context.Context, n int) error { return c.rs(ctx, "stop", n) }

// KillRS kills region server n with SIGKILL, as a crash would.
func (c *Cluster) KillRS(ctx context.Context, n int) error { return c.rs(ctx, "kill", n) }

// StartRS starts region server n again on its own port and configuration; a no-op for a running
// one, so it also brings back one that exited on its own (aborted after a long pause).
func (c *Cluster) StartRS(ctx context.Context, n int) error { return c.rs(ctx, "start", n) }

// PauseRS freezes region server n (SIGSTOP), as a long GC pause would: it keeps its regions and
// its ZooKeeper session until the session times out, and answers nothing until ResumeRS.
func (c *Cluster) PauseRS(ctx context.Context, n int) error { return c.rs(ctx, "pause", n) }

// ResumeRS lets a paused region server n run again (SIGCONT); a no-op if it is not running. One
// paused past its ZooKeeper session (30 s) has been declared dead meanwhile: on waking it aborts
// and exits, and StartRS brings it back.
func (c *Cluster) ResumeRS(ctx context.Context, n int) error { return c.rs(ctx, "unpause", n) }

// RestartMaster stops the master (SIGTERM, waited for) and starts it again; it returns once the new
// master has completed initialization. The region servers keep serving meanwhile.
func (c *Cluster) RestartMaster(ctx context.Context) error { return c.script(ctx, "master", "restart") }

func (c *Cluster) rs(ctx context.Context, verb string, n int) error {
	return c.script(ctx, "rs", verb, strconv.Itoa(n))
}

func (c *Cluster) script(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.Script}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hbasetest: cluster.sh %s: %w: %s", strings.Join(args, " "), err, lastLines(out.String(), 5))
	}
	return nil
}

// RSIndex is the 1-based number of the region server named server ("host,port[,startcode]"): the
// ports of cluster.sh are HBASE_CLUSTER_RS_PORT (16320) + 10*(n-1).
func RSIndex(server string) (int, error) {
	f := strings.Split(server, ",")
	if len(f) < 2 {
		return 0, fmt.Errorf("hbasetest: bad server name %q", server)
	}
	port, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, fmt.Errorf("hbasetest: bad server name %q: %w", server, err)
	}
	base := 16320
	if p, err := strconv.Atoi(os.Getenv("HBASE_CLUSTER_RS_PORT")); err == nil {
		base = p
	}
	if port < base || (port-base)%10 != 0 {
		return 0, fmt.Errorf("hbasetest: %q is not a region server of cluster.sh", server)
	}
	return (port-base)/10 + 1, nil
}

// HostPort is "host,port" of a server name "host,port,startcode": what MoveTo takes, stable across
// restarts of that server.
func HostPort(server string) string {
	f := strings.Split(server, ",")
	if len(f) < 2 {
		return server
	}
	return f[0] + "," + f[1]
}
