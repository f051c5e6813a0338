package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// sample is a report whose every goal is met; tests break one figure at a time.
func sample() *Report {
	return &Report{
		Store: "hbase://zk:2181", Raw: "gohbase", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration: 12, Config: DefaultConfig(),
		Spread: &SpreadResult{
			Rows: 40, Salt: "hash:4", Regions: 4,
			Salted: []int64{10, 11, 9, 10}, Unsalted: []int64{40, 0, 0, 0},
			SaltedMaxMean: 1.1, UnsaltedMaxMean: 4, UnsaltedMaxShare: 1,
		},
		Write: &WriteResult{
			Rows: 1000, NaiveRows: 100, NaiveRowsPerS: 1000, RawRowsPerS: 9000, BrineRowsPerS: 9000,
			RawConcurrency: 64, BrineOverNaive: 9, BrineOverRaw: 1.1,
			RawBatchRows: 1024, RawBatchWriters: 4, RawBatchRowsPerS: 8000, BrineOverRawBatch: 1.125,
		},
		Tuning: []TuningResult{{Concurrency: 64, Rows: 500, RowsPerS: 9000}},
		Scans: []ScanResult{
			{Buckets: 1, Rows: 1000, RawRowsPerS: 100, BrineRowsPerS: 80, Ratio: 0.8},
			{Buckets: 8, Rows: 1000, RawRowsPerS: 100, RawV2RowsPerS: 100, BrineRowsPerS: 200, Ratio: 2, RatioV2: 2, RawFirstRowMs: 1.5,
				BrineFirstRowMs: 2.25, FirstRowRatio: 1.5, RawParallelFirstRowMs: 2.25, FirstRowOverParallel: 1},
			{Buckets: 32, Rows: 1000, RawRowsPerS: 100, BrineRowsPerS: 95, Ratio: 0.95, RawFirstRowMs: 1.5, BrineFirstRowMs: 2.75,
				FirstRowRatio: 2.75 / 1.5, RawParallelFirstRowMs: 2.5, FirstRowOverParallel: 1.1},
		},
		Index: &IndexResult{
			Puts: []IndexPutResult{{Indexes: 0, RowsPerS: 1000, OverNoIndex: 1}, {Indexes: 1, RowsPerS: 500, OverNoIndex: 0.5}},
			Import: &IndexImportResult{Rows: 100, PlainRowsPerS: 176700, IndexRowsPerS: 17670, IndexOverPlain: 0.1,
				IndexOverBaseline: 10, CallsPerRow: 0.5, PlainServerCPU: 5, IndexServerCPU: 125},
		},
		Rebucket: &RebucketResult{Rows: 100, From: "hash:8", To: "hash:16", CopyRowsPerS: 500, ImportRowsPerS: 1000, CopyOverImport: 0.5, CallsPerRow: 0.2,
			ImportServerCPU: 5, CopyServerCPU: 20},
		Sync: &SyncResult{Rows: 2000, From: "hash:8", To: "hash:16", Differences: 20, Changed: 5, Missing: 5, Extra: 5, DeletedColumn: 5, Reread: 3900,
			VerifyMs: 100, SyncMs: 150, VerifyRowsPerS: 20000, SyncRowsPerS: 2000 / 0.15, SyncOverVerify: 1.5,
			VerifyCPU: CPUUse{MachinePerRow: 10, ClientPerRow: 5, Busy: 1}, SyncCPU: CPUUse{MachinePerRow: 12, ClientPerRow: 6.5, Busy: 0.98},
			VerifyServerCPU: 4, SyncServerCPU: 6},
		Shards: &ShardsResult{Rows: 2000, From: "hash:8", To: "hash:16", Shards: 2, Cores: 2, Connections: "separate",
			OneMs: 100, ShardedMs: 125, OneRowsPerS: 20000, ShardedRowsPerS: 16000, ShardedOverOne: 0.8, OneCopyRowsPerS: 25000, ShardedCopyRowsPerS: 20000,
			OneCPU: CPUUse{MachinePerRow: 8, ClientPerRow: 3, Busy: 1}, ShardedCPU: CPUUse{MachinePerRow: 9, ClientPerRow: 3.5, Busy: 1},
			OneServerCPU: 5, ShardedServerCPU: 5.5},
		Get: &GetResult{
			Gets: 10, RawP50us: 100, RawP99us: 300, BrineP50us: 102, BrineP99us: 310, P50Ratio: 1.02, P99Ratio: 310.0 / 300,
			BackendReadsPerGet: 1, BackendKeysPerGet: 1, DriverRPCsPerGet: 1,
		},
		Limits: []LimitResult{
			{Limit: 10, Buckets: 32, Batch: 100, Prefetch: 1, Returned: 10, BackendRows: 41, ServerRows: 320, Bound: 3210, ReadPerRow: 32},
		},
		Notes: []string{"a note"},
	}
}

func goal(t *testing.T, goals []GoalResult, prefix string) GoalResult {
	t.Helper()
	for _, g := range goals {
		if strings.HasPrefix(g.Name, prefix) {
			return g
		}
	}
	t.Fatalf("no goal %q in %+v", prefix, goals)
	return GoalResult{}
}

func TestEvaluate(t *testing.T) {
	all := Evaluate(sample())
	// Spread 2, writes 3, per scan of 8 and 32 buckets its time to first row and first row vs the
	// floor, fan-out vs both raw scanners, gets 2, indexed Import and Put, rebucket copy, sync, limit
	// (the shards have none).
	if len(all) != 18 {
		t.Fatalf("got %d goals, want 18: %+v", len(all), all)
	}
	for _, g := range all {
		if !g.Met {
			t.Errorf("goal %q (want %s, got %s) not met on the all-met sample", g.Name, g.Want, g.Got)
		}
	}
	tests := []struct {
		name   string
		goal   string
		break_ func(*Report)
	}{
		{"salted spread too uneven", "write spread, salted", func(r *Report) { r.Spread.SaltedMaxMean = 1.11 }},
		{"empty salted table", "write spread, salted", func(r *Report) { r.Spread.SaltedMaxMean = 0 }},
		{"unsalted not in one region", "write spread, unsalted", func(r *Report) { r.Spread.UnsaltedMaxShare = 0.99 }},
		{"import slow vs naive", "import vs naive", func(r *Report) { r.Write.BrineOverNaive = 4.99 }},
		{"import slow vs raw", "import vs raw batching", func(r *Report) { r.Write.BrineOverRaw = 1.09 }},
		{"import slow vs SendBatch", "import vs raw SendBatch", func(r *Report) { r.Write.BrineOverRawBatch = 1.09 }},
		{"indexed import under 10x the baseline", "indexed Import", func(r *Report) { r.Index.Import.IndexOverBaseline = 9.99 }},
		{"indexed import under 10% of plain", "indexed Import", func(r *Report) { r.Index.Import.IndexOverPlain = 0.099 }},
		{"indexed put too slow", "indexed Put, 1 index", func(r *Report) { r.Index.Puts[1].OverNoIndex = 0.49 }},
		{"rebucket copy too slow", "rebucket copy", func(r *Report) { r.Rebucket.CopyOverImport = 0.49 }},
		{"sync too slow", "sync of a 1% difference", func(r *Report) { r.Sync.SyncOverVerify = 1.51 }},
		{"sync not measured", "sync of a 1% difference", func(r *Report) { r.Sync.SyncOverVerify = 0 }},
		{"first row over the floor", "first row, 32-bucket", func(r *Report) { r.Scans[2].FirstRowOverParallel = 1.11 }},
		{"first row over the floor, 8 buckets", "first row, 8-bucket", func(r *Report) { r.Scans[1].FirstRowOverParallel = 1.11 }},
		{"first row over raw", "time to first row, 32 buckets", func(r *Report) { r.Scans[2].FirstRowRatio = 2.01 }},
		{"no floor measured", "first row, 32-bucket", func(r *Report) { r.Scans[2].FirstRowOverParallel = 0 }},
		{"fan-out too slow", "fan-out scan, 8 buckets, vs raw Scan", func(r *Report) { r.Scans[1].Ratio = 1.99 }},
		{"fan-out too slow vs ScanV2", "fan-out scan, 8 buckets, vs raw ScanV2", func(r *Report) { r.Scans[1].RatioV2 = 1.99 }},
		{"get too slow", "salted get p50", func(r *Report) { r.Get.P50Ratio = 1.021 }},
		{"first row too late", "time to first row, 8 buckets", func(r *Report) { r.Scans[1].FirstRowRatio = 2.01 }},
		{"get two RPCs", "salted get RPCs", func(r *Report) { r.Get.DriverRPCsPerGet = 2 }},
		{"get two keys", "salted get RPCs", func(r *Report) { r.Get.BackendKeysPerGet = 2 }},
		{"limit over bound", "limit 10 scan", func(r *Report) { r.Limits[0].ServerRows = 3211 }},
		{"limit over bound, backend figure", "limit 10 scan", func(r *Report) {
			r.Limits[0].ServerRows, r.Limits[0].BackendRows = -1, 3211
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sample()
			tt.break_(r)
			if g := goal(t, Evaluate(r), tt.goal); g.Met {
				t.Errorf("goal %q met with got %s", g.Name, g.Got)
			}
		})
	}
	t.Run("RPCs fall back to backend reads", func(t *testing.T) {
		r := sample()
		r.Get.DriverRPCsPerGet = -1
		if g := goal(t, Evaluate(r), "salted get RPCs"); !g.Met || g.Got != "1.00" {
			t.Errorf("got %+v", g)
		}
	})
	t.Run("sections not run give no goals", func(t *testing.T) {
		if g := Evaluate(&Report{}); len(g) != 0 {
			t.Errorf("got %+v", g)
		}
	})
}

// TestMarkdownNoServerCPU: without server pids the report says nothing of the server's CPU.
func TestMarkdownNoServerCPU(t *testing.T) {
	r := sample()
	r.Index.Import.PlainServerCPU, r.Index.Import.IndexServerCPU = 0, 0
	r.Rebucket.ImportServerCPU, r.Rebucket.CopyServerCPU = 0, 0
	r.Sync.VerifyServerCPU, r.Sync.SyncServerCPU = 0, 0
	r.Shards.OneServerCPU, r.Shards.ShardedServerCPU = 0, 0
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "server processes") {
		t.Errorf("Markdown speaks of server CPU it did not measure:\n%s", b.String())
	}
}

func TestMarkdown(t *testing.T) {
	r := sample()
	r.Write.BrineOverRaw = 0.5
	r.Goals = Evaluate(r)
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"store `hbase://zk:2181`, raw driver: gohbase",
		"## Targets",
		"| import vs raw batching | >= 1.1x | 0.50x | **no** |",
		"| import vs raw SendBatch | >= 1.1x | 1.12x (9000 vs 8000 rows/s) | yes |",
		"| first row, 32-bucket scan, vs its floor | <= 1.1x the floor (32 raw scanners opened at once) | 1.10x (2.75 ms; floor 2.50 ms) | yes |",
		"| fan-out scan, 8 buckets, vs raw ScanV2 | >= 2.0x raw rows/s | 2.00x | yes |",
		"| indexed Import, 2 indexes | >= 10x the first indexed Import's 1767 rows/s and >= 0.10x a plain Import | 17670 rows/s: 10.00x that, 0.100x plain (176700 rows/s) | yes |",
		"| indexed Put, 1 index | >= 0.5x a plain Put | 0.50x (500 rows/s) | yes |",
		"| rebucket copy, hash:8 to hash:16 | >= 0.5x a plain Import of the same rows | 0.50x (500 vs 1000 rows/s) | yes |",
		"SendBatch of rows in hand (the best of its sweep)",
		"| raw, SendBatch of 1024 rows from 4 writers | 1000 | 8000 | 1.12x |",
		"| `Table.Rebucket`'s copy (from its migrate step to its copied step) | 500 | 0.50x |",
		"| 2 indexes | 17670 | 0.100x | 10.00x | 0.50 |",
		"The server processes spent 5.0 µs of CPU per row on the plain `Import` and 125.0 µs on the indexed one (25.0x).",
		"The server processes spent 5.0 µs of CPU per row on the `Import` and 20.0 µs on the copy (4.0x).",
		"| import vs naive loop | >= 5.0x | 9.00x | yes |",
		"| 0 | 10 | 40 |",
		"| **max/mean** | **1.100** | **4.000** |",
		"| raw, 64 concurrent Puts (client batching) | 1000 | 9000 | 0.50x |",
		"| 8 | 1000 | 100 | 100 | 200 | 2.00x | 2.00x | 1.50 ms | 2.25 ms | 1.50x | 2.25 ms | 1.00x |",
		"| brine/raw | 1.020x | 1.033x |",
		"1.00 driver RPC(s)",
		"| 10 | 32 | 100 | 1 | 10 | 320 | 41 | 32.0 | 3210 |",
		"| sync of a 1% difference (20 of 2000 rows) vs verify | <= 1.5x verify's time | 1.50x (150.0 ms vs 100.0 ms) | yes |",
		"| `compare.Tables` (`brine verify`), counting the differences | 100.0 | 20000 | 1.00x | 10.0 | 5.0 | 100% |",
		"| `migrate.Sync` (`brine sync`), repairing them | 150.0 | 13333 | 1.50x | 12.0 | 6.5 | 98% |",
		"5 changed values, 5 rows missing from the target, 5 extra rows in it, 5 deleted columns.",
		"read the differing ranges again (3900 rows of the two)",
		"The server processes spent 4.0 µs of CPU per row on the verify and 6.0 µs on the sync (1.50x).",
		"| one process, unsharded (`brine copy`) | 100.0 | 20000 | 1.00x | 25000 | 8.0 | 3.0 | 100% |",
		"| 2 shards at once (`brine copy --shard I/2`) | 125.0 | 16000 | 0.80x | 20000 | 9.0 | 3.5 | 100% |",
		"from a client of its own, each over a connection of its own to the store",
		"The server processes spent 5.0 µs of CPU per row on the copy by one process and 5.5 µs on the shards' (1.10x).",
		"- a note",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table row has as many cells as its header.
	var cols int
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		n := strings.Count(line, "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("row %q has %d bars, header has %d", line, n, cols)
		}
	}
}

func TestMarkdownUnobservedServerRows(t *testing.T) {
	r := sample()
	r.Limits[0].ServerRows = -1
	r.Get.DriverRPCsPerGet = -1
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); !strings.Contains(md, "| n/a | 41 |") || strings.Contains(md, "driver RPC") {
		t.Errorf("unobserved figures shown wrongly:\n%s", md)
	}
}

func TestWriteJSON(t *testing.T) {
	r := sample()
	r.Goals = Evaluate(r)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("bench.json does not parse: %v\n%s", err, b.String())
	}
	if back.Write.BrineOverRaw != 1.1 || back.Rebucket == nil || back.Index.Import.IndexOverBaseline != 10 || back.Get.RawP50us != 100 || len(back.Goals) != len(r.Goals) || back.Config.Rows != r.Config.Rows {
		t.Errorf("round trip lost figures: %+v", back)
	}
	var raw map[string]any
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"spread", "write", "scans", "get", "limit_scans", "index", "rebucket", "sync", "shards", "goals", "config", "raw_tuning"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("bench.json lacks %q", key)
		}
	}
	goals := raw["goals"].([]any)
	if g := goals[0].(map[string]any); g["met"] != true || g["name"] == "" {
		t.Errorf("goal entry: %v", g)
	}
}

// TestMarkdownCPU: the copy and exclusive tables carry each measure's CPU per row, and the ratio
// CPU per row allows is said only where it was measured.
func TestMarkdownCPU(t *testing.T) {
	measured := func() *Report {
		r := sample()
		r.Copy = &CopyResult{Rows: 100, From: "hash:8", To: "hash:16", ImportRowsPerS: 1000, CopyRowsPerS: 800, CopyOverImport: 0.8,
			LocalImportRowsPerS: 2000, LocalCopyRowsPerS: 1600, LocalCopyOverImport: 0.8,
			ImportCPU: CPUUse{MachinePerRow: 3.4, ClientPerRow: 1.6, Busy: 0.92}, CopyCPU: CPUUse{MachinePerRow: 4.25, ClientPerRow: 2.1, Busy: 0.9},
			LocalImportCPU: CPUUse{MachinePerRow: 1.6, ClientPerRow: 1.6, Busy: 0.89}, LocalCopyCPU: CPUUse{MachinePerRow: 2, ClientPerRow: 1.8, Busy: 0.91}}
		r.Index.Exclusive = &ExclusiveResult{Rows: 100, PlainRowsPerS: 1000, ImportRowsPerS: 250, ImportOverPlain: 0.25,
			PlainCPU: CPUUse{MachinePerRow: 6.5, ClientPerRow: 3, Busy: 0.93}, ImportCPU: CPUUse{MachinePerRow: 26, ClientPerRow: 11, Busy: 0.94}}
		return r
	}
	unmeasured := measured()
	unmeasured.Copy.ImportCPU, unmeasured.Copy.CopyCPU, unmeasured.Copy.LocalImportCPU, unmeasured.Copy.LocalCopyCPU = CPUUse{}, CPUUse{}, CPUUse{}, CPUUse{}
	unmeasured.Index.Exclusive.PlainCPU, unmeasured.Index.Exclusive.ImportCPU = CPUUse{}, CPUUse{}
	cases := []struct {
		name      string
		r         *Report
		want, not []string
	}{
		{"measured", measured(), []string{
			"| this store | `migrate.Copy` (`brine copy --salt hash:16`): its reading and writing | 800 | 0.80x | 4.2 | 2.1 | 90% |",
			"| embedded | `Table.Import` into a fresh hash:16 table | 2000 | 1.00x | 1.6 | 1.6 | 89% |",
			"the import's CPU per row over the copy's: 0.80x on this store, 0.80x into the embedded store.",
			"| `ExclusiveTable.Import` into a fresh table with 2 indexes | 250 | 0.25x | 26.0 | 11.0 | 94% |",
			"the plain Import's CPU per row over its own: 0.25x.",
		}, nil},
		{"unmeasured", unmeasured, []string{
			"| this store | `migrate.Copy` (`brine copy --salt hash:16`): its reading and writing | 800 | 0.80x | – | – | – |",
			"| `ExclusiveTable.Import` into a fresh table with 2 indexes | 250 | 0.25x | – | – | – |",
		}, []string{"over the copy's", "over its own"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.r.Markdown(&b); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("Markdown lacks %q:\n%s", want, md)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(md, not) {
					t.Errorf("Markdown has %q:\n%s", not, md)
				}
			}
		})
	}
}
