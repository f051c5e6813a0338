package backends_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
)

// rowAtomicOnly hides memory's native batch call, so the fallback is what runs.
type rowAtomicOnly struct {
	backends.Backend
	backends.RowAtomic
}

// plainOnly has no atomic operations at all.
type plainOnly struct{ backends.Backend }

func condPut(key, family, expect, value string) backends.CondMutation {
	return backends.CondMutation{
		Cond: backends.Condition{Family: "d", Qualifier: "q", Value: []byte(expect)},
		Mut:  backends.Mutation{Key: []byte(key), Cells: []backends.Cell{{Family: family, Qualifier: "q", Value: []byte(value)}}},
	}
}

func TestCheckAndMutateBatchFallback(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	if err := m.CreateTable(ctx, "t", backends.TableOptions{Families: []string{"d"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(ctx, "t", []backends.Mutation{{Key: []byte("b"), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("1")}}}}); err != nil {
		t.Fatal(err)
	}
	fb := rowAtomicOnly{m, m}
	ms := []backends.CondMutation{condPut("a", "d", "", "x"), condPut("b", "d", "", "x"), condPut("c", "zz", "", "x"), condPut("d", "d", "", "x")}
	applied, rowErrs, err := backends.CheckAndMutateBatch(ctx, fb, "t", ms)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []bool{true, false, false, true}) || rowErrs == nil || rowErrs[0] != nil || rowErrs[1] != nil ||
		!errors.Is(rowErrs[2], backends.ErrInvalidArgument) || rowErrs[3] != nil {
		t.Errorf("fallback = %v, %v; want [true false false true] and ErrInvalidArgument for row c only", applied, rowErrs)
	}

	tests := []struct {
		name string
		b    backends.Backend
		tbl  string
		ms   []backends.CondMutation
		want error
	}{
		{"no atomic operations", plainOnly{m}, "t", ms[:1], backends.ErrUnsupported},
		{"missing table", fb, "nope", ms[:2], backends.ErrTableNotFound},
		{"same row twice", fb, "t", []backends.CondMutation{ms[0], ms[0]}, backends.ErrInvalidArgument},
		{"empty key", fb, "t", []backends.CondMutation{condPut("", "d", "", "x")}, backends.ErrInvalidKey},
	}
	for _, tt := range tests {
		applied, rowErrs, err := backends.CheckAndMutateBatch(ctx, tt.b, tt.tbl, tt.ms)
		if !errors.Is(err, tt.want) || applied != nil || rowErrs != nil {
			t.Errorf("%s: %v, %v, %v; want nil, nil, %v", tt.name, applied, rowErrs, err, tt.want)
		}
	}
}
