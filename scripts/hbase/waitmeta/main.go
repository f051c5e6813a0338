// Command waitmeta waits until an HBase cluster answers through gohbase, the client brine's tests use:
// hbase:meta must be scannable, the master must list tables, and (with -probe) a table must be creatable
// and droppable. A log line saying the master is up is not enough: the region server may still be
// opening hbase:meta, or may have registered a host name the client cannot dial.
//
//	go run ./scripts/hbase/waitmeta -zk 127.0.0.1:2181 -timeout 120s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
)

func main() {
	zk := flag.String("zk", envOr("BRINE_HBASE_ZK", "127.0.0.1:2181"), "ZooKeeper quorum")
	timeout := flag.Duration("timeout", 120*time.Second, "give up after this long")
	probe := flag.Bool("probe", true, "also create and drop a probe table")
	quiet := flag.Bool("quiet", false, "print nothing on success")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	if err := wait(ctx, *zk, *probe); err != nil {
		slog.Error("waitmeta: HBase not ready", "zk", *zk, "after", time.Since(start).Round(time.Millisecond), "err", err)
		os.Exit(1)
	}
	if !*quiet {
		fmt.Printf("waitmeta: hbase:meta readable through gohbase at %s after %s\n", *zk, time.Since(start).Round(time.Millisecond))
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// wait retries with fresh clients: a gohbase client that looked up a region while the server was
// half-started keeps backing off on its own schedule, a new one asks ZooKeeper again at once.
func wait(ctx context.Context, zk string, probe bool) error {
	var last error
	for {
		attempt, cancel := context.WithTimeout(ctx, 10*time.Second)
		last = check(attempt, zk, probe)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func check(ctx context.Context, zk string, probe bool) error {
	// gohbase logs every failed region lookup at error level; while the server is still starting,
	// those failures are expected.
	quiet := gohbase.Logger(slog.New(slog.DiscardHandler))
	client := gohbase.NewClient(zk, gohbase.ZookeeperTimeout(5*time.Second), gohbase.RegionLookupTimeout(5*time.Second), quiet)
	defer client.Close()

	scan, err := hrpc.NewScanStr(ctx, "hbase:meta", hrpc.NumberOfRows(10))
	if err != nil {
		return err
	}
	sc := client.Scan(scan)
	defer sc.Close()
	if _, err := sc.Next(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("scan hbase:meta: %w", err)
	}

	admin := gohbase.NewAdminClient(zk, gohbase.ZookeeperTimeout(5*time.Second), gohbase.RegionLookupTimeout(5*time.Second), quiet)
	list, err := hrpc.NewListTableNames(ctx)
	if err != nil {
		return err
	}
	if _, err := admin.ListTableNames(list); err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	if !probe {
		return nil
	}

	table := fmt.Sprintf("brine_waitmeta_%d", time.Now().UnixNano())
	ct := hrpc.NewCreateTable(ctx, []byte(table), map[string]map[string]string{"f": nil})
	if err := admin.CreateTable(ct); err != nil {
		return fmt.Errorf("create probe table: %w", err)
	}
	put, err := hrpc.NewPutStr(ctx, table, "k", map[string]map[string][]byte{"f": {"q": []byte("v")}})
	if err != nil {
		return err
	}
	_, putErr := client.Put(put)
	if err := admin.DisableTable(hrpc.NewDisableTable(ctx, []byte(table))); err != nil {
		return fmt.Errorf("disable probe table: %w", err)
	}
	if err := admin.DeleteTable(hrpc.NewDeleteTable(ctx, []byte(table))); err != nil {
		return fmt.Errorf("delete probe table: %w", err)
	}
	if putErr != nil {
		return fmt.Errorf("put into probe table: %w", putErr)
	}
	return nil
}
