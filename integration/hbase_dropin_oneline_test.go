//go:build integration

package integration

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/internal/gomodtest"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// onelineProgram is a gohbase program as its author wrote it, knowing nothing of brine, on today's
// gohbase API: rows written, one deleted, one read back, a batch of writes and a read sent at once
// (SendBatch), a range scanned (Scan) and another read response by response (ScanV2), and every
// cell read printed as "op row fam:qual=value".
const onelineProgram = `package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
)

func main() {
	zk, table := os.Args[1], os.Args[2]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	client := gohbase.NewClient(zk, gohbase.EffectiveUser("oneline"))
	defer client.Close()

	for i := range 20 {
		key := fmt.Sprintf("row%02d", i)
		put, err := hrpc.NewPutStr(ctx, table, key, map[string]map[string][]byte{"d": {"q": []byte("v" + key)}})
		check(err)
		_, err = client.Put(put)
		check(err)
	}
	del, err := hrpc.NewDelStr(ctx, table, "row05", nil)
	check(err)
	_, err = client.Delete(del)
	check(err)

	get, err := hrpc.NewGetStr(ctx, table, "row07")
	check(err)
	r, err := client.Get(get)
	check(err)
	print("get", r)

	scan, err := hrpc.NewScanRangeStr(ctx, table, "row03", "row15")
	check(err)
	sc := client.Scan(scan)
	defer sc.Close()
	for {
		r, err := sc.Next()
		if err == io.EOF {
			break
		}
		check(err)
		print("scan", r)
	}

	var batch []hrpc.Call
	for i := 20; i < 24; i++ {
		key := fmt.Sprintf("row%02d", i)
		put, err := hrpc.NewPutStr(ctx, table, key, map[string]map[string][]byte{"d": {"q": []byte("v" + key)}})
		check(err)
		batch = append(batch, put)
	}
	bget, err := hrpc.NewGetStr(ctx, table, "row09")
	check(err)
	res, allOK := client.SendBatch(ctx, append(batch, bget))
	for _, r := range res {
		check(r.Error)
	}
	if !allOK || len(res) != len(batch)+1 {
		check(fmt.Errorf("SendBatch: allOK %v, %d results", allOK, len(res)))
	}
	print("batch", hrpc.ToLocalResult(res[len(batch)].Msg.(*pb.GetResponse).GetResult()))

	scan2, err := hrpc.NewScanRangeStr(ctx, table, "row18", "row23")
	check(err)
	sc2 := client.ScanV2(scan2)
	defer sc2.Close()
	for {
		resp, err := sc2.Next()
		if err == io.EOF {
			break
		}
		check(err)
		for _, r := range resp.Results {
			for _, c := range r.Cells {
				fmt.Printf("scanv2 %s %s:%s=%s\n", c.Row(), c.Family(), c.Qualifier(), c.Value())
			}
		}
	}
}

func print(op string, r *hrpc.Result) {
	for _, c := range r.Cells {
		fmt.Printf("%s %s %s:%s=%s\n", op, c.Row, c.Family, c.Qualifier, c.Value)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// The swap, as its author makes it: the constructor's line, and the import it needs.
const (
	rawLine      = "\tclient := gohbase.NewClient(zk, gohbase.EffectiveUser(\"oneline\"))"
	dropinLine   = "\tclient := dropin.NewClient(zk, gohbase.EffectiveUser(\"oneline\"))"
	gohbaseLine  = "\t\"github.com/tsuna/gohbase\""
	dropinImport = "\t\"github.com/brine-kv/brine/backends/hbase/dropin\""
)

// lineDiff returns the lines only a has and the lines only b has, by a longest common subsequence.
func lineDiff(a, b []string) (onlyA, onlyB []string) {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			onlyA, i = append(onlyA, a[i]), i+1
		default:
			onlyB, j = append(onlyB, b[j]), j+1
		}
	}
	return append(onlyA, a[i:]...), append(onlyB, b[j:]...)
}

// TestDropinOneLineProgram builds onelineProgram twice, as written and with its constructor line
// swapped for dropin.NewClient (the only other change being that package's import), runs the first
// on an unsalted table and the second on a table brine created salted with hash:8, and compares what
// they printed. The salted table's physical keys show that the swapped program did salt.
func TestDropinOneLineProgram(t *testing.T) {
	zk := hbasetest.ZK(t)
	e := openHBase(t)
	salted := e.salted(t, "hash:8", 0).Name()
	plain := e.unsalted(t, nil)

	swapped := strings.Replace(onelineProgram, rawLine, dropinLine, 1)
	swapped = strings.Replace(swapped, gohbaseLine, dropinImport+"\n"+gohbaseLine, 1)
	onlyRaw, onlySwapped := lineDiff(strings.Split(onelineProgram, "\n"), strings.Split(swapped, "\n"))
	if !slices.Equal(onlyRaw, []string{rawLine}) || !slices.Equal(onlySwapped, []string{dropinImport, dropinLine}) {
		t.Fatalf("the programs differ by\n-%q\n+%q\nwant the constructor line, and the import it needs", onlyRaw, onlySwapped)
	}

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir, bin := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := gomodtest.Download(ctx, root); err != nil {
		t.Fatal(err)
	}
	if err := gomodtest.Write(root, dir, "oneline", map[string]string{
		"raw/main.go": onelineProgram, "dropin/main.go": swapped,
	}); err != nil {
		t.Fatal(err)
	}
	if out, err := gomodtest.Go(ctx, dir, []string{gomodtest.ModuleFlags}, "build", "-o", bin+string(filepath.Separator), "./..."); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	run := func(name, table string) []string {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), zk, table)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the %s program on %s: %v\n%s", name, table, err, stderr.String())
		}
		return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	}
	want := []string{"get row07 d:q=vrow07"}
	for i := 3; i < 15; i++ {
		if i != 5 {
			want = append(want, fmt.Sprintf("scan row%02d d:q=vrow%02d", i, i))
		}
	}
	want = append(want, "batch row09 d:q=vrow09")
	for i := 18; i < 23; i++ {
		want = append(want, fmt.Sprintf("scanv2 row%02d d:q=vrow%02d", i, i))
	}
	rawOut := run("raw", plain)
	if !slices.Equal(rawOut, want) {
		t.Fatalf("the raw program printed\n%s\nwant\n%s", strings.Join(rawOut, "\n"), strings.Join(want, "\n"))
	}
	if got := run("dropin", salted); !slices.Equal(got, rawOut) {
		t.Errorf("the swapped program printed\n%s\nthe raw one\n%s", strings.Join(got, "\n"), strings.Join(rawOut, "\n"))
	}

	physical := rawScan(t, e.raw, salted, nil, nil)
	if len(physical) != 23 {
		t.Fatalf("the salted table holds %d rows, want 23", len(physical))
	}
	for _, r := range physical {
		if len(r.Key) <= len("row00") || !strings.HasPrefix(r.Key[len(r.Key)-len("row00"):], "row") {
			t.Errorf("physical key %q is not a salt before a logical key", r.Key)
		}
	}
}

// TestDropinSystemTablesPassThrough: HBase's own tables need no option: a Get of hbase:namespace and
// a Scan of this test's rows of hbase:meta through dropin.NewClient answer as raw gohbase does.
func TestDropinSystemTablesPassThrough(t *testing.T) {
	zk := hbasetest.ZK(t)
	e := openHBase(t)
	salted := e.salted(t, "hash:8", 0).Name()
	c := dropin.NewClient(zk)
	defer c.Close()
	ctx := testkit.Context(t, time.Minute)

	get := func(cl gohbase.Client) row {
		t.Helper()
		r, err := cl.Get(must2(hrpc.NewGetStr(ctx, "hbase:namespace", "default")))
		if err != nil {
			t.Fatalf("Get hbase:namespace default: %v", err)
		}
		return resultRow(r)
	}
	if got, want := get(c), get(e.raw); got.String() != want.String() || len(want.Cells) == 0 {
		t.Errorf("Get hbase:namespace default: drop-in %v, raw %v", got, want)
	}

	// hbase:meta's rows of the salted table, one per bucket region ("name,startkey,regionid.hash."),
	// from a scan of all of hbase:meta (its rows sort by a comparator of their own, so no byte range
	// is sure to hold exactly one table's); other tests' tables come and go meanwhile.
	ours := func(rows []row) []row {
		return slices.DeleteFunc(rows, func(r row) bool { return !strings.HasPrefix(r.Key, salted+",") })
	}
	want := ours(rawScan(t, e.raw, "hbase:meta", nil, nil))
	all, err := drain(c.Scan(must2(hrpc.NewScanStr(ctx, "hbase:meta", hrpc.NumberOfRows(1000)))))
	if err != nil {
		t.Fatalf("Scan hbase:meta: %v", err)
	}
	got := ours(all)
	if len(want) != 8 {
		t.Errorf("raw: %d rows of hbase:meta for a table of 8 regions", len(want))
	}
	if d := diffRows(got, want); d != "" {
		t.Errorf("Scan hbase:meta through the drop-in: %s", d)
	}
}
