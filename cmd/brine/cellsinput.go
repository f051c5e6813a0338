package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/brine-kv/brine/client"
)

// formatCells is scan --format cells read back: one JSON object a line, the key's bytes (raw,
// base64) and every cell with its family, qualifier, timestamp and value (base64), so cells of
// several families and timestamps, and any bytes, import as they were scanned.
const formatCells inputFormat = "cells"

// cellLine is one line of the cells format, as cellsWriter writes it.
type cellLine struct {
	Key   string `json:"key"` // the key as printed: for the reader, not read back
	Raw   []byte `json:"raw"`
	Cells []struct {
		Family    string `json:"family"`
		Qualifier string `json:"qualifier"`
		Timestamp int64  `json:"ts"`
		Value     []byte `json:"value"`
	} `json:"cells"`
}

// readCells reads the cells format; a line that is not one fails alone, with its line number.
func readCells(r io.Reader) iter.Seq2[record, error] {
	return readLines(r, func(rec *record, line []byte) error {
		m, err := parseCellLine(line)
		rec.mutation = m
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
