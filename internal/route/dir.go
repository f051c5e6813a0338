package route

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/backends"
)

// The directory: one row per rebucketed logical table in the store's table DirTable, holding which
// physical table serves it, with which spec, and the state of a rebucket under way. A table never
// rebucketed has no row and is served by the physical table of its own name. Every change of the row
// but a copied bucket's progress mark is a CheckAndMutate on its version, so two rebucket processes
// cannot both move the same step.

// DirTable is the store table that maps rebucketed logical tables to their physical tables.
const DirTable = "brine_dir"

const dirFamily = "d"

// Rebucket states, in the order a rebucket moves through them (see Table.Rebucket).
const (
	stateServing  = ""         // no rebucket under way: phys/spec serve
	statePause    = "pause"    // writers wait; readers read phys
	stateMigrate  = "migrate"  // writers copy a row to target before changing it; reads merge
	stateCopied   = "copied"   // every old row is in target; writers mark the rows they change
	stateSwitched = "switched" // target serves; writers write it plainly
)

// Dir is a logical table's directory row.
type Dir struct {
	version     int64
	state       string
	phys, spec  string   // the serving table (the old one until the switch)
	target      string   // the new physical table while a rebucket is under way
	targetSpec  string   //
	families    []string // user families of target, for whole-row deletes
	maxVersions int
	gen         int64 // rebucket generation: names target and scopes the progress marks
	drop        string
	done        map[int]bool // old buckets copied in generation gen
}

// Serving reports whether no rebucket is under way: Phys serves the table under Spec.
func (r Dir) Serving() bool { return r.state == stateServing }

// State is the rebucket step under way ("" when Serving).
func (r Dir) State() string { return r.state }

// Phys is the physical table serving the table (the old one until a rebucket's switch).
func (r Dir) Phys() string { return r.phys }

// Spec is Phys's salting spec; TargetSpec the new one's during a rebucket.
func (r Dir) Spec() string { return r.spec }

// TargetSpec is the salting spec a rebucket under way moves the table to.
func (r Dir) TargetSpec() string { return r.targetSpec }

func (r Dir) cells() []backends.Cell {
	kv := [][2]string{
		{"v", strconv.FormatInt(r.version, 10)}, {"state", r.state}, {"phys", r.phys}, {"spec", r.spec},
		{"target", r.target}, {"tspec", r.targetSpec}, {"fam", strings.Join(r.families, ",")},
		{"maxv", strconv.Itoa(r.maxVersions)}, {"gen", strconv.FormatInt(r.gen, 10)}, {"drop", r.drop},
	}
	cells := make([]backends.Cell, len(kv))
	for i, p := range kv {
		cells[i] = backends.Cell{Family: dirFamily, Qualifier: p[0], Value: []byte(p[1])}
	}
	return cells
}

func doneQualifier(gen int64, bucket int) string { return fmt.Sprintf("b%d_%d", gen, bucket) }

// parseDirRow reads a directory row from its cells (newest version of each first), with the buckets
// marked copied in its generation.
func parseDirRow(cells []backends.Cell) (Dir, error) {
	var r Dir
	vals := map[string]string{}
	for _, c := range cells {
		if _, seen := vals[c.Qualifier]; !seen { // newest version first
			vals[c.Qualifier] = string(c.Value)
		}
	}
	var err error
	if r.version, err = strconv.ParseInt(vals["v"], 10, 64); err != nil {
		return r, fmt.Errorf("directory row: version %q: %w", vals["v"], err)
	}
	if r.gen, err = strconv.ParseInt(vals["gen"], 10, 64); err != nil {
		return r, fmt.Errorf("directory row: generation %q: %w", vals["gen"], err)
	}
	if r.maxVersions, err = strconv.Atoi(vals["maxv"]); err != nil {
		return r, fmt.Errorf("directory row: max versions %q: %w", vals["maxv"], err)
	}
	r.state, r.phys, r.spec, r.target, r.targetSpec, r.drop = vals["state"], vals["phys"], vals["spec"], vals["target"], vals["tspec"], vals["drop"]
	if f := vals["fam"]; f != "" {
		r.families = strings.Split(f, ",")
	}
	r.done = map[int]bool{}
	prefix := fmt.Sprintf("b%d_", r.gen)
	for q := range vals {
		if rest, ok := strings.CutPrefix(q, prefix); ok {
			if b, err := strconv.Atoi(rest); err == nil {
				r.done[b] = true
			}
		}
	}
	return r, nil
}

// ReadDir returns the directory row of a logical table; found is false when it has none (or the
// store has no directory yet).
func ReadDir(ctx context.Context, b backends.Backend, logical string) (_ Dir, found bool, _ error) {
	rows, err := b.Read(ctx, DirTable, [][]byte{[]byte(logical)}, backends.ReadOptions{})
	if errors.Is(err, backends.ErrTableNotFound) {
		return Dir{}, false, nil
	}
	if err != nil {
		return Dir{}, false, fmt.Errorf("read directory of %q: %w", logical, err)
	}
	if len(rows) != 1 || len(rows[0].Cells) == 0 {
		return Dir{}, false, nil
	}
	r, err := parseDirRow(rows[0].Cells)
	if err != nil {
		return Dir{}, false, fmt.Errorf("read directory of %q: %w", logical, err)
	}
	return r, true, nil
}

// casDir replaces the directory row from with to (to's version is set to from's plus one), if the
// stored version is still from's: the atomic switch of every rebucket step.
func casDir(ctx context.Context, b backends.Backend, logical string, from Dir, to *Dir) error {
	want := []byte(nil) // version 0: no row yet; an empty expected value means absent
	if from.version > 0 {
		want = []byte(strconv.FormatInt(from.version, 10))
	}
	to.version = from.version + 1
	applied, err := b.CheckAndMutate(ctx, DirTable, backends.Condition{Family: dirFamily, Qualifier: "v", Value: want},
		backends.Mutation{Key: []byte(logical), Cells: to.cells()})
	if err != nil {
		return fmt.Errorf("rebucket %s: update directory: %w", logical, err)
	}
	if !applied {
		return fmt.Errorf("rebucket %s: %w", logical, ErrRebucketConflict)
	}
	return nil
}

// markDone records that old bucket b was copied; no version change, since the mark is scoped to the
// generation and only ever added.
func markDone(ctx context.Context, b backends.Backend, logical string, gen int64, bucket int) error {
	rowErrs, err := b.Apply(ctx, DirTable, []backends.Mutation{{Key: []byte(logical),
		Cells: []backends.Cell{{Family: dirFamily, Qualifier: doneQualifier(gen, bucket), Value: []byte{'1'}}}}})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return fmt.Errorf("rebucket %s: record bucket %d copied: %w", logical, bucket, err)
	}
	return nil
}

// ensureDir creates the directory table if the store has none.
func ensureDir(ctx context.Context, b backends.Backend) error {
	err := b.CreateTable(ctx, DirTable, backends.TableOptions{Families: []string{dirFamily}})
	if err != nil && !errors.Is(err, backends.ErrTableExists) {
		return fmt.Errorf("create directory table: %w", err)
	}
	return nil
}

// DeleteRebucketed deletes a rebucketed table by its logical name: the physical table serving it, an
// old one still kept, and its directory row. done is false when the name has no directory row.
func DeleteRebucketed(ctx context.Context, b backends.Backend, name string) (done bool, _ error) {
	row, found, err := ReadDir(ctx, b, name)
	if err != nil || !found {
		return false, err
	}
	if row.state != stateServing {
		return true, fmt.Errorf("delete table %q: %w (step %s): finish it first", name, ErrRebucketing, row.state)
	}
	for _, phys := range []string{row.phys, row.drop} {
		if phys == "" {
			continue
		}
		if err := b.DeleteTable(ctx, phys); err != nil && !errors.Is(err, backends.ErrTableNotFound) {
			return true, fmt.Errorf("delete table %q: %w", name, err)
		}
	}
	rowErrs, err := b.Apply(ctx, DirTable, []backends.Mutation{{Key: []byte(name), Delete: true}})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return true, fmt.Errorf("delete table %q: directory row: %w", name, err)
	}
	return true, nil
}

// RewriteMeta changes a table's meta by compare-and-set: change edits a copy of the meta read and
// says whether to write it; on a conflict the meta is read again and change runs again.
func RewriteMeta(ctx context.Context, b backends.Backend, table string, change func(meta map[string]string) (bool, error)) error {
	for {
		phys, err := MetaTable(ctx, b, table, true)
		if err != nil {
			return err
		}
		old, err := b.TableMeta(ctx, phys)
		if err != nil {
			return err
		}
		next := maps.Clone(old)
		if write, err := change(next); err != nil || !write {
			return err
		}
		err = b.RewriteTableMeta(ctx, phys, old, next)
		if !errors.Is(err, backends.ErrMetaChanged) {
			return err
		}
	}
}

// MetaTable is the physical table whose meta holds a logical table's definitions: the table itself,
// or the one serving it after rebuckets (a rebucket copies the meta to its new table at its pause
// step). With rewrite set it fails with ErrRebucketing while a rebucket is under way: a rewrite of
// the old table's meta after that copy would be lost at the switch.
func MetaTable(ctx context.Context, b backends.Backend, logical string, rewrite bool) (string, error) {
	row, found, err := ReadDir(ctx, b, logical)
	if err != nil || !found {
		return logical, err
	}
	if rewrite && !row.Serving() {
		return "", fmt.Errorf("table %s: %w (state %s): change its meta once it has finished", logical, ErrRebucketing, row.State())
	}
	return row.Phys(), nil
}
