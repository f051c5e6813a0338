package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestCLIImportMetrics: import --metrics prints the client's metrics, in Prometheus' text format,
// with the import's rows by outcome and its latency under the semantic conventions' names.
func TestCLIImportMetrics(t *testing.T) {
	c := newCLI(t)
	in := c.file("rows.csv", csvRows(300, 300))
	out := c.ok("import", "--store", c.store, "--table", c.tab("m"), "--create", "--salt", "hash:4", "--key", typedKey, "--metrics", in)
	for _, want := range []string{
		`(?m)^brine_client_import_rows_total\{brine_import_outcome="written",db_collection_name="m",db_operation_name="import",db_system="bbolt",[^}]*\} 300$`,
		`(?m)^brine_client_rows_written_total\{[^}]*db_operation_name="import"[^}]*\} 300$`,
		`(?m)^db_client_operation_duration_seconds_count\{db_collection_name="m",db_operation_name="import",db_system="bbolt",[^}]*\} 1$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if c.env.clientOptions != nil {
		t.Error("the import's metrics options outlive it")
	}
}

// TestMetricsServe: --metrics-addr serves the same registry over HTTP while the command runs, and
// stopping shuts the server down.
func TestMetricsServe(t *testing.T) {
	c := newCLI(t)
	m := metricsFlags{addr: "127.0.0.1:0"}
	mr, err := m.start(c.env, "memory://")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl := client.New(memory.New(), mr.opts...)
	defer cl.Close()
	s := testkit.Salter(t, "hash:4")
	tbl, err := cl.CreateTable(ctx, "t", client.TableConfig{Salter: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if err := tbl.Put(ctx, []byte(k), client.Cell{Family: "d", Qualifier: "q", Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get("http://" + mr.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := `(?m)^brine_client_rows_written_total\{db_collection_name="t",db_operation_name="put",db_system="memory",[^}]*\} 2$`
	if !regexp.MustCompile(want).Match(body) {
		t.Errorf("/metrics lacks %s:\n%s", want, body)
	}
	if err := mr.stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + mr.addr + "/metrics"); err == nil {
		t.Error("the metrics server still answers after stop")
	}
}

func TestStoreAttributes(t *testing.T) {
	tests := []struct{ url, system, address string }{
		{"hbase://zk1:2181,zk2:2181/hbase", "hbase", "zk1:2181,zk2:2181"},
		{"tablestore://inst@inst.cn-hangzhou.ots.aliyuncs.com", "tablestore", "inst.cn-hangzhou.ots.aliyuncs.com"},
		{"tablestore+http://inst@127.0.0.1:8080", "tablestore", "127.0.0.1:8080"},
		{"local://brine.db", "bbolt", ""},
		{"memory://", "memory", ""},
	}
	for _, tc := range tests {
		if s, a := storeAttributes(tc.url); s != tc.system || a != tc.address {
			t.Errorf("storeAttributes(%q) = %q, %q; want %q, %q", tc.url, s, a, tc.system, tc.address)
		}
	}
}
