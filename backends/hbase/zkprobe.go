package hbase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrNoCluster is returned by Open when no HBase answers at the configured ZooKeeper quorum: no
// ZooKeeper there, or one where no HBase master has registered under the znode parent.
var ErrNoCluster = errors.New("hbase: no HBase cluster at the ZooKeeper quorum")

// CheckCluster checks, with no gohbase client, that ZooKeeper answers and that HBase's
// master and hbase:meta znodes are there. The pinned gohbase looks those up in goroutines that retry
// forever and that its Close does not stop, so opening a wrong address would leak them for the life
// of the process; checking first keeps a bad address a plain error. Open calls it; code that builds its
// own gohbase clients for New can call it too. root empty means "/hbase".
func CheckCluster(ctx context.Context, quorum, root string) error {
	if root == "" {
		root = "/hbase"
	}
	conn, events, err := zk.Connect(strings.Split(quorum, ","), 30*time.Second,
		zk.WithLogger(quietZK{}), zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNoCluster, quorum, err)
	}
	defer conn.Close()
	for connected := false; !connected; {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s: ZooKeeper did not answer: %w", ErrNoCluster, quorum, ctx.Err())
		case ev := <-events:
			connected = ev.State == zk.StateHasSession
		}
	}
	for _, node := range []string{"/master", "/meta-region-server"} {
		ok, _, err := conn.Exists(root + node)
		if err != nil {
			return fmt.Errorf("%w: %s: reading %s%s: %w", ErrNoCluster, quorum, root, node, err)
		}
		if !ok {
			return fmt.Errorf("%w: %s: znode %s%s is missing (HBase not started, or another znode parent)",
				ErrNoCluster, quorum, root, node)
		}
	}
	return nil
}

// quietZK drops the ZooKeeper client's connection chatter: a failed probe is reported as an error.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}
