package records

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/client"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		want       Format
	}{
		{"", "in.csv", CSV}, {"", "in", CSV}, {"", "in.tsv", TSV}, {"", "in.jsonl", JSONL}, {"", "in.ndjson", JSONL},
		{"", "in.json", JSONL}, {"cells", "in.csv", Cells}, {"TSV", "in.csv", TSV},
	} {
		if got, err := ParseFormat(tc.name, tc.path); err != nil || got != tc.want {
			t.Errorf("ParseFormat(%q, %q) = %q, %v; want %q", tc.name, tc.path, got, err, tc.want)
		}
	}
	if _, err := ParseFormat("xml", "in.xml"); err == nil {
		t.Error("ParseFormat(xml): no error")
	}
}

// TestReadErrorsNameTheirLine: a record that cannot be read fails alone, with a LineError naming
// its line, and the records after it are read.
func TestReadErrorsNameTheirLine(t *testing.T) {
	for _, tc := range []struct {
		format Format
		input  string
		bad    []int64 // the lines that fail
		good   int     // records read without error
	}{
		{CSV, "id,v\na,1\nb\nc,3\n", []int64{3}, 2},
		{TSV, "id\tv\na\t1\tx\nb\t2\n", []int64{2}, 1},
		{JSONL, "{\"id\":\"a\"}\nnot json\n\n{\"id\":\"b\",\"v\":{\"n\":1}}\n", []int64{2}, 2},
		{Cells, "{\"raw\":\"YQ==\",\"cells\":[{\"family\":\"d\",\"qualifier\":\"q\",\"ts\":5,\"value\":\"dg==\"}]}\n{\"raw\":\"\"}\n", []int64{2}, 1},
	} {
		_, recs, err := Read(strings.NewReader(tc.input), tc.format)
		if err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		var bad []int64
		good := 0
		for rec, err := range recs {
			if err == nil {
				good++
				continue
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != rec.Line {
				t.Errorf("%s: error %v of line %d is not its LineError", tc.format, err, rec.Line)
			}
			bad = append(bad, rec.Line)
		}
		if !slices.Equal(bad, tc.bad) || good != tc.good {
			t.Errorf("%s: lines %v failed and %d read, want %v and %d", tc.format, bad, good, tc.bad, tc.good)
		}
	}
}

// TestCellsRoundTrip: rows written by CellsWriter read back as the same mutations, any bytes and
// every timestamp kept.
func TestCellsRoundTrip(t *testing.T) {
	rows := []client.Row{
		{Key: []byte{0, 0xff, '\n'}, Cells: []client.Cell{{Family: "d", Qualifier: "q", Timestamp: 1, Value: []byte{0}}, {Family: "m", Qualifier: "", Timestamp: 2, Value: nil}}},
		{Key: []byte("k2"), Cells: []client.Cell{{Family: "d", Qualifier: "x\ty", Timestamp: 3, Value: []byte("v")}}},
	}
	var buf bytes.Buffer
	w := CellsWriter(&buf, func(k []byte) string { return string(k) })
	for _, r := range append(rows, client.Row{}) {
		if err := w(r); err != nil {
			t.Fatal(err)
		}
	}
	_, recs, err := Read(&buf, Cells)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rec, err := range recs {
		if err != nil {
			t.Fatalf("line %d: %v", rec.Line, err)
		}
		m := rec.Mutation
		if !bytes.Equal(m.Key, rows[i].Key) || len(m.Cells) != len(rows[i].Cells) {
			t.Fatalf("row %d read back as %+v, want %+v", i, m, rows[i])
		}
		for j, c := range m.Cells {
			want := rows[i].Cells[j]
			if c.Family != want.Family || c.Qualifier != want.Qualifier || c.Timestamp != want.Timestamp || !bytes.Equal(c.Value, want.Value) {
				t.Fatalf("row %d cell %d read back as %+v, want %+v", i, j, c, want)
			}
		}
		i++
	}
	if i != len(rows) {
		t.Fatalf("%d rows read back, %d written", i, len(rows))
	}
}

var fuzzFormats = []Format{CSV, TSV, JSONL, Cells}

// FuzzReport: any input of any format reads without a panic, each record failing alone with its
// line, and its records written by FailureWriter read back as the same records: a failure report
// is an input of the same format, whichever records failed.
func FuzzReport(f *testing.F) {
	for i, s := range []string{
		"id,n,v\na,1,x\nb,2\nc,3,y,extra\ne,5,\"quoted, with comma\"\n",
		"\ufeffid,n,v\r\n\"multi\nline\",1,x\r\n,2,empty id\r\n",
		"id,n,v\nok,1,x\n\"bad\"quote,2,y\nok2,3,z\n",
		"id\tn\tv\na\t1\tx\"y\nb\t2\n\"c\t3\tz\n",
		"{\"id\":\"a\",\"n\":1}\nnot json\n{\"id\":\"b\"}\n[1,2]\n\n{\"id\":\"d\",\"v\":{\"nested\":true}}",
		"id,n,0\n\"\"", "id,n\n0,0,\"", "id,n,v\n\"a\r\r\nb\",x,y\n",
		"{\"raw\":\"YQ==\",\"cells\":[{\"family\":\"d\",\"qualifier\":\"q\",\"ts\":5,\"value\":\"dg==\"}]}\n",
	} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, sel uint8, input []byte) {
		format := fuzzFormats[int(sel)%len(fuzzFormats)]
		header, recs, err := Read(bytes.NewReader(input), format)
		if err != nil {
			return // no header: nothing is read
		}
		var all []Record
		for rec, err := range recs {
			if err != nil && !strings.Contains(err.Error(), "line ") {
				t.Fatalf("the error of line %d does not name it: %v", rec.Line, err)
			}
			if len(rec.Input) > 0 {
				all = append(all, rec)
			}
		}
		var buf bytes.Buffer
		fw := NewFailureWriter(&buf, format, header)
		for _, rec := range all {
			if err := fw.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := fw.Flush(); err != nil {
			t.Fatal(err)
		}
		h2, again, err := Read(&buf, format)
		if len(all) == 0 {
			return
		}
		if err != nil {
			t.Fatalf("the report %q does not read back: %v", buf.String(), err)
		}
		if format.HasHeader() && !slices.Equal(h2, header) {
			t.Fatalf("the report's header is %q, the input's %q", h2, header)
		}
		i := 0
		for rec := range again {
			if i >= len(all) {
				t.Fatalf("the report holds more records than the %d written", len(all))
			}
			if !sameRecord(rec, all[i]) {
				t.Fatalf("record of line %d reads back changed:\n was  %q %q %q\n now  %q %q %q",
					all[i].Line, all[i].Raw, all[i].Fields, all[i].Input, rec.Raw, rec.Fields, rec.Input)
			}
			i++
		}
		if i != len(all) {
			t.Fatalf("%d records written to the report, %d read back", len(all), i)
		}
	})
}

// sameRecord compares what a Record holds, not where it was.
func sameRecord(a, b Record) bool {
	return maps.Equal(a.Fields, b.Fields) && slices.Equal(a.Raw, b.Raw) &&
		bytes.Equal(bytes.TrimSuffix(a.Input, []byte("\n")), bytes.TrimSuffix(b.Input, []byte("\n")))
}
