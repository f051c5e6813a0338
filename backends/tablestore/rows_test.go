package tablestore

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

func TestPrepareLimits(t *testing.T) {
	b := newBackend(nil, Options{})
	s := mustSchema(t, "pk:BINARY")
	cell := func(q string, n int) backends.Cell {
		return backends.Cell{Family: "d", Qualifier: q, Value: bytes.Repeat([]byte{'v'}, n), Timestamp: 1}
	}
	many := func(n int) []backends.Cell {
		var cs []backends.Cell
		for i := range n {
			cs = append(cs, cell(fmt.Sprintf("q%d", i), 1))
		}
		return cs
	}
	tests := []struct {
		name string
		m    backends.Mutation
		want error // nil: accepted
	}{
		{"ok", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("v", 1)}}, nil},
		{"empty key", backends.Mutation{Key: nil, Cells: []backends.Cell{cell("v", 1)}}, backends.ErrInvalidKey},
		{"key over 1 KB", backends.Mutation{Key: bytes.Repeat([]byte{1}, 1025), Cells: []backends.Cell{cell("v", 1)}}, backends.ErrInvalidKey},
		{"value 2 MB", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("v", 2<<20)}}, nil},
		{"value over 2 MB", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("v", 2<<20+1)}}, backends.ErrInvalidArgument},
		{"row over 4 MB", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("a", 2<<20), cell("b", 2<<20)}}, backends.ErrInvalidArgument},
		{"bad qualifier", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("a.b", 1)}}, backends.ErrInvalidArgument},
		{"bad family on delete", backends.Mutation{Key: []byte("k"), Delete: true, Cells: []backends.Cell{{Family: "d_", Qualifier: "x"}}}, backends.ErrInvalidArgument},
		{"key column as cell", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Qualifier: "pk", Value: []byte("x")}}}, backends.ErrInvalidArgument},
		{"negative timestamp", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Timestamp: -1}}}, backends.ErrInvalidArgument},
		{"1024 columns", backends.Mutation{Key: []byte("k"), Cells: many(1024)}, nil},
		{"1025 columns", backends.Mutation{Key: []byte("k"), Cells: many(1025)}, backends.ErrInvalidArgument},
		{"delete row", backends.Mutation{Key: []byte("k"), Delete: true}, nil},
		{"delete row, empty key", backends.Mutation{Delete: true}, backends.ErrInvalidKey},
	}
	for _, tt := range tests {
		_, err := b.prepare(s, "t", 0, tt.m)
		if tt.want == nil && err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestPrepareChanges(t *testing.T) {
	b := newBackend(nil, Options{})
	s := mustSchema(t, "pk:BINARY")
	tests := []struct {
		name       string
		m          backends.Mutation
		kind       string
		idempotent bool
		cols       int
	}{
		{"put with timestamps", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "a", Timestamp: 5}}}, "update", true, 1},
		{"put stamped by the server", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "a", Timestamp: 5}, {Family: "d", Qualifier: "b"}}}, "update", false, 2},
		{"same column, two versions: both sent", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{
			{Family: "d", Qualifier: "a", Value: []byte("new"), Timestamp: 9}, {Family: "d", Qualifier: "a", Value: []byte("old"), Timestamp: 3}}}, "update", true, 2},
		{"same column and timestamp twice: the last given wins", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{
			{Family: "d", Qualifier: "a", Value: []byte("first"), Timestamp: 9}, {Family: "d", Qualifier: "a", Value: []byte("new"), Timestamp: 9}}}, "update", true, 1},
		{"delete cells", backends.Mutation{Key: []byte("k"), Delete: true, Cells: []backends.Cell{{Family: "d", Qualifier: "a"}}}, "update", false, 1},
		{"delete row", backends.Mutation{Key: []byte("k"), Delete: true}, "delete", false, 0},
	}
	for _, tt := range tests {
		p, err := b.prepare(s, "t", 0, tt.m)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if p.idempotent != tt.idempotent {
			t.Errorf("%s: idempotent = %v", tt.name, p.idempotent)
		}
		switch ch := p.change.(type) {
		case *ots.UpdateRowChange:
			if tt.kind != "update" || len(ch.Columns) != tt.cols {
				t.Errorf("%s: UpdateRowChange with %d columns, want %s with %d", tt.name, len(ch.Columns), tt.kind, tt.cols)
			}
			for _, c := range ch.Columns {
				if tt.m.Delete && (c.Type != ots.DELETE_ALL_VERSION || !c.HasType) {
					t.Errorf("%s: column %s is not a delete of all versions", tt.name, c.ColumnName)
				}
				if !tt.m.Delete && c.ColumnName == "d__a" && tt.name == "same column and timestamp twice: the last given wins" && string(c.Value.([]byte)) != "new" {
					t.Errorf("%s: kept %q", tt.name, c.Value)
				}
			}
			if ch.Condition.RowExistenceExpectation != ots.RowExistenceExpectation_IGNORE {
				t.Errorf("%s: condition %v", tt.name, ch.Condition.RowExistenceExpectation)
			}
		case *ots.DeleteRowChange:
			if tt.kind != "delete" {
				t.Errorf("%s: DeleteRowChange, want %s", tt.name, tt.kind)
			}
		default:
			t.Errorf("%s: change %T", tt.name, ch)
		}
	}
}

func TestSplitBatches(t *testing.T) {
	mk := func(keys []string, size int) []*prepared {
		var ps []*prepared
		for i, k := range keys {
			ps = append(ps, &prepared{idx: i, key: k, size: size})
		}
		return ps
	}
	seq := func(n int) []string {
		var ks []string
		for i := range n {
			ks = append(ks, fmt.Sprintf("k%04d", i))
		}
		return ks
	}
	tests := []struct {
		name  string
		ps    []*prepared
		sizes []int
		dup   bool
	}{
		{"450 rows", mk(seq(450), 100), []int{200, 200, 50}, false},
		{"200 rows", mk(seq(200), 100), []int{200}, false},
		{"by bytes", mk(seq(10), 1<<20), []int{4, 4, 2}, false},
		{"repeated key", mk([]string{"a", "b", "a", "c"}, 100), []int{2, 2}, true},
		{"one huge row", mk(seq(1), 5<<20), []int{1}, false},
	}
	for _, tt := range tests {
		batches, dup := splitBatches(tt.ps)
		var sizes []int
		next := 0
		for _, bt := range batches {
			sizes = append(sizes, len(bt))
			for _, p := range bt {
				if p.idx != next {
					t.Errorf("%s: order broken at %d", tt.name, p.idx)
				}
				next++
			}
		}
		if fmt.Sprint(sizes) != fmt.Sprint(tt.sizes) || dup != tt.dup {
			t.Errorf("%s: batches %v dup %v, want %v dup %v", tt.name, sizes, dup, tt.sizes, tt.dup)
		}
	}
}

func TestPageLimit(t *testing.T) {
	tests := []struct{ remaining, batch, want int }{
		{0, 0, 0}, {10, 0, 10}, {0, 50, 50}, {10, 50, 10}, {100, 50, 50}, {0, 9000, 5000}, {7000, 0, 5000},
	}
	for _, tt := range tests {
		if got := pageLimit(tt.remaining, tt.batch); got != tt.want {
			t.Errorf("pageLimit(%d, %d) = %d, want %d", tt.remaining, tt.batch, got, tt.want)
		}
	}
}
