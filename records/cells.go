package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/brine-kv/brine/client"
)

// cellLine is one line of the cells format, as CellsWriter writes it.
type cellLine struct {
	Key   string     `json:"key"` // the key as printed: for the reader, not read back
	Raw   []byte     `json:"raw"`
	Cells []cellJSON `json:"cells"`
}

// cellJSON is one cell of a cells line; the value is base64, so any bytes survive.
type cellJSON struct {
	Family    string `json:"family"`
	Qualifier string `json:"qualifier"`
	Timestamp int64  `json:"ts"`
	Value     []byte `json:"value"`
}

// CellsWriter writes each row to w as a line of the cells format: its key as printKey prints it
// (for the reader), its raw key, and every cell; a zero Row is the end.
func CellsWriter(w io.Writer, printKey func([]byte) string) func(client.Row) error {
	enc := json.NewEncoder(w)
	return func(row client.Row) error {
		if row.Key == nil {
			return nil
		}
		line := cellLine{Key: printKey(row.Key), Raw: row.Key}
		for _, c := range row.Cells {
			line.Cells = append(line.Cells, cellJSON{c.Family, c.Qualifier, c.Timestamp, c.Value})
		}
		return enc.Encode(line)
	}
}

// readCells reads the cells format; a line that is not one fails alone, with its line number.
func readCells(r io.Reader) iter.Seq2[Record, error] {
	return readLines(r, func(rec *Record, line []byte) error {
		m, err := parseCellLine(line)
		rec.Mutation = m
		return err
	})
}

func parseCellLine(b []byte) (*client.Mutation, error) {
	var cl cellLine
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cl); err != nil {
		return nil, fmt.Errorf("not a line of scan --format cells: %w", err)
	}
	if len(cl.Raw) == 0 {
		return nil, errors.New(`no "raw" key bytes`)
	}
	if len(cl.Cells) == 0 {
		return nil, errors.New("no cells")
	}
	m := &client.Mutation{Key: cl.Raw}
	for _, c := range cl.Cells {
		if c.Family == "" || c.Timestamp <= 0 {
			return nil, fmt.Errorf("cell %s:%s: want a family and a timestamp of positive milliseconds, got ts %d", c.Family, c.Qualifier, c.Timestamp)
		}
		m.Cells = append(m.Cells, client.Cell{Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp, Value: c.Value})
	}
	return m, nil
}
