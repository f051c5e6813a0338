//go:build integration

package hfile

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
	"testing"
	"time"
)

// TestHBaseReadsEveryFile writes every fixture and has HBase 2.6.4's own code read it, from the
// Maven jars (scripts/hbase/hfile.sh): HFilePrettyPrinter prints the trailer, the file info, the
// mid-key and every cell with its key order checked, and seeks rows through the index; HFileCheck
// reads every block with HBase's checksum verification on, as a region server does. The test
// asserts on the fields it parses, never on whole lines (the printer's output carries dates and
// paths). It needs a JDK and Maven: without them it skips, and under CI=true it fails.
func TestHBaseReadsEveryFile(t *testing.T) {
	script := hfileScript(t)
	dir := t.TempDir()
	var paths []string
	files := map[string]fixture{}
	for _, fx := range fixtures() {
		path := filepath.Join(dir, fx.name)
		if err := os.WriteFile(path, writeFile(t, fx), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		files[path] = fx
	}

	t.Run("checksums", func(t *testing.T) {
		out, err := runScript(t, script, append([]string{"check"}, paths...)...)
		if err != nil {
			t.Fatal(err)
		}
		lines := parseCheck(t, out)
		for _, path := range paths {
			fx, got := files[path], lines[path]
			data, _ := os.ReadFile(path)
			r, _ := readAll(t, data)
			leaves, err := r.DataIndex()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{"cells": len(fx.cells), "checksumFailures": 0, "DATA": len(leaves), "FILE_INFO": 1, "ROOT_INDEX": 2}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: HBase read %s=%d, want %d (%v)", fx.name, k, got[k], v, got)
				}
			}
			if fx.levels > 1 && (got["LEAF_INDEX"] == 0 || (fx.levels > 2) != (got["INTERMEDIATE_INDEX"] > 0)) {
				t.Errorf("%s: %d levels, but HBase read %d leaf and %d intermediate index blocks", fx.name, fx.levels, got["LEAF_INDEX"], got["INTERMEDIATE_INDEX"])
			}
		}
	})

	t.Run("corrupt checksum is seen", func(t *testing.T) {
		data, _ := os.ReadFile(paths[0])
		data[headerSize+8+keyLen(files[paths[0]].cells[0])] ^= 0x01 // the first byte of the first value
		bad := filepath.Join(dir, "corrupt")
		if err := os.WriteFile(bad, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runScript(t, script, "check", bad)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || parseCheck(t, out)[bad]["checksumFailures"] != 1 {
			t.Fatalf("HBase's check of a corrupted file: %v, %q; want exit 1 and one checksum failure", err, out)
		}
	})

	for _, path := range paths {
		fx := files[path]
		t.Run("printer/"+fx.name, func(t *testing.T) {
			out, err := runScript(t, script, "print", "-m", "-p", "-k", "-f", "file://"+path)
			if err != nil {
				t.Fatal(err)
			}
			p := parsePrinter(out)
			if len(p.warnings) > 0 {
				t.Errorf("the printer warned: %q", p.warnings)
			}
			if p.scanned != len(fx.cells) || len(p.cells) != len(fx.cells) {
				t.Fatalf("the printer scanned %d cells and printed %d, want %d", p.scanned, len(p.cells), len(fx.cells))
			}
			for i, c := range fx.cells {
				if want := printedCell(c); p.cells[i] != want {
					t.Fatalf("cell %d printed as %q, want %q", i, p.cells[i], want)
				}
			}
			data, _ := os.ReadFile(path)
			r, _ := readAll(t, data)
			leaves, _ := r.DataIndex()
			trailer := map[string]string{
				"entryCount":         strconv.Itoa(len(fx.cells)),
				"numDataIndexLevels": strconv.Itoa(fx.levels),
				"dataIndexCount":     strconv.Itoa(len(r.Root)),
				"compressionCodec":   fx.opts.withDefaults().Compression.String(),
				"majorVersion":       "3",
				"minorVersion":       "3",
				"fileinfoOffset":     strconv.FormatInt(r.Trailer.FileInfoOffset, 10),
			}
			for k, v := range trailer {
				if p.trailer[k] != v {
					t.Errorf("trailer %s = %q, want %q", k, p.trailer[k], v)
				}
			}
			info := map[string]string{
				"KEY_VALUE_VERSION":             "1",
				"MAX_MEMSTORE_TS_KEY":           "0",
				"MAJOR_COMPACTION_KEY":          "true",
				"EXCLUDE_FROM_MINOR_COMPACTION": "false",
				"BULKLOAD_TIMESTAMP":            strconv.FormatInt(createdAt.UnixMilli(), 10),
				"hfile.CREATE_TIME_TS":          strconv.FormatInt(createdAt.UnixMilli(), 10),
				"hfile.MAX_TAGS_LEN":            "0",
				"hfile.TAGS_COMPRESSED":         "false",
				"DELETE_FAMILY_COUNT":           strconv.Itoa(count(fx.cells, TypeDeleteFamily)),
			}
			if fx.opts.SourceTask != "" {
				info["BULKLOAD_SOURCE_TASK"] = fx.opts.SourceTask
			}
			if len(fx.cells) > 0 {
				from, to, _ := r.Info.TimeRange()
				earliest, _ := r.Info.Int64(InfoEarliestPutTS)
				info["TIMERANGE"] = fmt.Sprintf("%d....%d", from, to)
				info["EARLIEST_PUT_TS"] = strconv.FormatInt(earliest, 10)
				info["hfile.LASTKEY"] = printedKey(fx.cells[len(fx.cells)-1]) + "/vlen=0/mvcc=0"
			}
			for k, v := range info {
				if p.info[k] != v {
					t.Errorf("file info %s = %q, want %q", k, p.info[k], v)
				}
			}
			if len(fx.cells) == 0 {
				if p.first != "Optional.empty" || p.last != "Optional.empty" {
					t.Errorf("an empty file's first and last keys: %q, %q", p.first, p.last)
				}
				return
			}
			first, last := fx.cells[0], fx.cells[len(fx.cells)-1]
			if want := "Optional[" + printedKey(first) + "/seqid=0]"; p.first != want {
				t.Errorf("firstKey %q, want %q", p.first, want)
			}
			if want := "Optional[" + printedKey(last) + "/seqid=0]"; p.last != want {
				t.Errorf("lastKey %q, want %q", p.last, want)
			}
			// HBase's split point: the first key of a middle data block, found through the
			// mid-key metadata (the leaf entry (n-1)/2 of n) with several levels, or taken from
			// the root (entry n/2) with one.
			midEntry := (len(leaves) - 1) / 2
			if fx.levels == 1 {
				midEntry = len(leaves) / 2
			}
			mid, err := ParseKey(leaves[midEntry].Key)
			if err != nil {
				t.Fatal(err)
			}
			if want := "Optional[" + printedKey(mid) + "/seqid=0]"; p.midKey != want {
				t.Errorf("Mid-key %q, want %q", p.midKey, want)
			}
		})
	}

	// Seeking a row goes from the root through every index level to one data block.
	for _, path := range paths {
		fx := files[path]
		if fx.levels < 2 && fx.name != "versions-and-deletes" {
			continue
		}
		for _, row := range [][]byte{fx.cells[len(fx.cells)/2].Row, fx.cells[len(fx.cells)-1].Row} {
			t.Run(fmt.Sprintf("seek/%s/%s", fx.name, toStringBinary(row)), func(t *testing.T) {
				out, err := runScript(t, script, "print", "-p", "-w", toStringBinary(row), "-f", "file://"+path)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, c := range fx.cells {
					if bytes.Equal(c.Row, row) {
						want = append(want, printedCell(c))
					}
				}
				if got := parsePrinter(out).cells; strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("seek to %q printed %q, want %q", row, got, want)
				}
			})
		}
	}
}

// hfileScript finds scripts/hbase/hfile.sh above the working directory, and a JDK and Maven.
func hfileScript(t *testing.T) string {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("mvn"); err != nil {
		missing = "mvn"
	}
	if _, err := exec.LookPath("java"); err != nil && os.Getenv("HBASE_JAVA_HOME") == "" {
		missing = "java"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found but CI=true: HBase's own reader must check the files (apt-get install openjdk-17-jdk-headless maven)", missing)
		}
		t.Skipf("%s not found: HBase's HFile reader needs a JDK and Maven", missing)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		script := filepath.Join(dir, "scripts", "hbase", "hfile.sh")
		if _, err := os.Stat(script); err == nil {
			return script
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("scripts/hbase/hfile.sh not found above the working directory")
		}
		dir = filepath.Dir(dir)
	}
}

func runScript(t *testing.T, script string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("hfile.sh %s: %w\n%s", args[0], err, stderr.String())
	}
	return stdout.String(), nil
}

// parseCheck reads HFileCheck's lines: "PATH name=N name=N ...".
func parseCheck(t *testing.T, out string) map[string]map[string]int {
	t.Helper()
	files := map[string]map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		counts := map[string]int{}
		for _, f := range fields[1:] {
			name, v, ok := strings.Cut(f, "=")
			n, err := strconv.Atoi(v)
			if !ok || err != nil {
				t.Fatalf("HFileCheck printed %q", line)
			}
			counts[name] = n
		}
		files[fields[0]] = counts
	}
	return files
}

// printed is what HFilePrettyPrinter's output says of a file.
type printed struct {
	cells       []string          // "K: ... V: ..." lines, as printed
	scanned     int               // "Scanned kv count -> N"
	trailer     map[string]string // the Trailer section's name=value fields
	info        map[string]string // the Fileinfo section's name = value fields
	first, last string            // the reader's firstKey=, lastKey=
	midKey      string
	warnings    []string // what -k found out of order
}

func parsePrinter(out string) printed {
	p := printed{scanned: -1, trailer: map[string]string{}, info: map[string]string{}}
	section := ""
	for _, line := range strings.Split(out, "\n") {
		indented := strings.HasPrefix(line, "    ")
		field := strings.TrimSuffix(strings.TrimSpace(line), ",")
		switch {
		case strings.HasPrefix(line, "K: "):
			p.cells = append(p.cells, line)
		case strings.HasPrefix(line, "Scanned kv count -> "):
			p.scanned, _ = strconv.Atoi(strings.TrimPrefix(line, "Scanned kv count -> "))
		case strings.Contains(line, "WARNING"):
			p.warnings = append(p.warnings, line)
		case strings.HasPrefix(line, "Mid-key: "):
			p.midKey = strings.TrimPrefix(line, "Mid-key: ")
		case !indented:
			section = strings.TrimSuffix(line, ":")
		case section == "Trailer":
			if k, v, ok := strings.Cut(field, "="); ok {
				p.trailer[k] = v
			}
		case section == "Fileinfo":
			if k, v, ok := strings.Cut(field, " = "); ok {
				p.info[k] = v
			}
		case strings.HasPrefix(field, "firstKey="):
			p.first = strings.TrimPrefix(field, "firstKey=")
		case strings.HasPrefix(field, "lastKey="):
			p.last = strings.TrimPrefix(field, "lastKey=")
		}
	}
	return p
}

// printedKey is a key as HBase's KeyValue.keyToString prints it.
func printedKey(c Cell) string {
	return fmt.Sprintf("%s/%s:%s/%d/%v", toStringBinary(c.Row), toStringBinary(c.Family), toStringBinary(c.Qualifier), c.Timestamp, c.typ())
}

// printedCell is a cell as the printer's -p prints it.
func printedCell(c Cell) string {
	return fmt.Sprintf("K: %s/vlen=%d/seqid=0 V: %s", printedKey(c), len(c.Value), toStringBinary(c.Value))
}

// toStringBinary is HBase's Bytes.toStringBinary: letters, digits and some punctuation as
// themselves, any other byte as \xNN.
func toStringBinary(b []byte) string {
	const plain = " `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?"
	var sb strings.Builder
	for _, c := range b {
		if c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || strings.IndexByte(plain, c) >= 0 {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, `\x%02X`, c)
		}
	}
	return sb.String()
}

func count(cells []Cell, t Type) int {
	n := 0
	for _, c := range cells {
		if c.typ() == t {
			n++
		}
	}
	return n
}
