package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stores are the drivers a copy goes between in these tests; HBase and Tablestore run the same
// copies in package integration.
var stores = map[string]func(t *testing.T) backends.Backend{
	"memory": func(*testing.T) backends.Backend { return memory.New() },
	"local": func(t *testing.T) backends.Backend {
		b, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "db"), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return b
	},
}

func open(t *testing.T, kind string) *client.Client {
	c := client.New(stores[kind](t), client.WithRouteRefresh(20*time.Millisecond), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

const rows = 3000

func key(i int) []byte { return fmt.Appendf(nil, "o%06d", i) }

// load creates table "orders" (hash:4, two families, 3 versions kept, one index when indexed) with
// rows rows, each written twice (two versions), and returns the time between the two writes.
func load(t *testing.T, ctx context.Context, c *client.Client, indexed bool) time.Time {
	t.Helper()
	cfg := client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Families: []string{"d", "m"}, MaxVersions: 3,
		KeySchema: testkit.Schema(t, "id:string")}
	write := func(version string, ts int64) {
		var tbl client.TableAPI
		var err error
		switch {
		case version == "1" && indexed:
			ix, perr := client.ParseIndexConfig("by_buyer", "salt=hash:3|key=c:d:buyer")
			if perr != nil {
				t.Fatal(perr)
			}
			cfg.Indexes = []client.IndexConfig{ix}
			tbl, err = c.CreateTable(ctx, "orders", cfg)
		case version == "1":
			tbl, err = c.CreateTable(ctx, "orders", cfg)
		default:
			tbl, err = c.OpenTable(ctx, "orders", nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		muts := make([]client.Mutation, rows)
		for i := range muts {
			muts[i] = client.Mutation{Key: key(i), Cells: []client.Cell{
				{Family: "d", Qualifier: "buyer", Value: fmt.Appendf(nil, "b%d", i%50), Timestamp: ts},
				{Family: "m", Qualifier: "v", Value: []byte(version), Timestamp: ts},
			}}
		}
		if rowErrs, err := tbl.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
			t.Fatal(err, errors.Join(rowErrs...))
		}
	}
	write("1", 1_000_000)
	write("2", 2_000_000)
	return time.UnixMilli(1_500_000)
}

// deleteSome deletes, from the source, a column of one row (both its versions) and a whole row: a
// copy must bring neither back.
func deleteSome(t *testing.T, ctx context.Context, c *client.Client, indexed bool) {
	t.Helper()
	var tbl client.TableAPI
	var err error
	if indexed {
		tbl, err = c.OpenTable(ctx, "orders", nil)
	} else {
		tbl, err = c.OpenTable(ctx, "orders", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, key(5), client.Column{Family: "m", Qualifier: "v"}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, key(6)); err != nil {
		t.Fatal(err)
	}
}

// equal fails t unless the two tables hold the same rows (every version with all).
func equal(t *testing.T, ctx context.Context, a, b *client.Client, as string, all bool) {
	t.Helper()
	ta, err := a.Describe(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	open := func(c *client.Client, name string, indexed bool) compare.Source {
		if indexed {
			it, err := c.OpenTable(ctx, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			return it
		}
		tbl, err := c.OpenTable(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	indexed := len(ta.Indexes) > 0
	var st compare.Stats
	for d, err := range compare.Tables(ctx, open(a, "orders", indexed), open(b, as, indexed), client.Range{}, compare.Options{AllVersions: all, Stats: &st}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("differ: %v at %q", d.Kind, d.Key)
	}
	if st.RowsA != st.RowsB || st.RowsA < rows-1 {
		t.Errorf("compared %d rows with %d, want %d or %d each", st.RowsA, st.RowsB, rows-1, rows)
	}
}

func TestCopyBetweenStores(t *testing.T) {
	for _, pair := range [][2]string{{"memory", "local"}, {"local", "memory"}, {"memory", "memory"}} {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-to-%s/indexed=%t", pair[0], pair[1], indexed), func(t *testing.T) {
				ctx := testkit.Context(t, time.Minute)
				from, to := open(t, pair[0]), open(t, pair[1])
				load(t, ctx, from, indexed)
				deleteSome(t, ctx, from, indexed)
				st, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Salter: testkit.Salter(t, "hash:7"), AllVersions: true})
				if err != nil {
					t.Fatal(err)
				}
				if st.Rows != rows-1 || st.Cells != 4*rows-6 || !st.Created {
					t.Errorf("stats %+v, want %d rows, %d cells, created", st, rows-1, 4*rows-6)
				}
				equal(t, ctx, from, to, "orders", true)
				got, err := to.Describe(ctx, "orders")
				if err != nil {
					t.Fatal(err)
				}
				want, _ := from.Describe(ctx, "orders")
				if got.Salter.Spec() != "hash:7" || got.KeySchema.String() != want.KeySchema.String() ||
					fmt.Sprint(got.Families) != fmt.Sprint(want.Families) || got.MaxVersions != 3 || len(got.Indexes) != len(want.Indexes) {
					t.Errorf("target described as %+v, want the source's %+v re-salted hash:7", got, want)
				}
				if indexed {
					it, err := to.OpenTable(ctx, "orders", nil)
					if err != nil {
						t.Fatal(err)
					}
					ix, err := it.Index("by_buyer")
					if err != nil {
						t.Fatal(err)
					}
					if ix.State() != client.IndexActive {
						t.Errorf("index state %s, want active", ix.State())
					}
					if n := testkit.Count(t, ix.Scan(ctx, client.Range{})); n != rows-1 {
						t.Errorf("query by the copied index: %d rows, want %d", n, rows-1)
					}
				}
				if _, err := to.OpenTable(ctx, migrate.CheckpointTable("orders"), nil); !errors.Is(err, client.ErrTableNotFound) {
					t.Errorf("checkpoint left after the copy: %v", err)
				}
			})
		}
	}
}

// TestCopySinceAndVersions: the latest versions only, then a catch-up pass that copies only the cells
// written after Since into the existing target.
func TestCopySinceAndVersions(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	mid := load(t, ctx, from, false)
	if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	equal(t, ctx, from, to, "orders", false)
	st, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Since: mid.Add(time.Hour)})
	if err != nil || st.Rows != 0 || st.Created {
		t.Fatalf("catch-up with nothing newer: %+v, %v; want 0 rows into the existing target", st, err)
	}
	src, err := from.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Put(ctx, key(7), client.Cell{Family: "m", Qualifier: "v", Value: []byte("3"), Timestamp: 3_000_000}); err != nil {
		t.Fatal(err)
	}
	if st, err = migrate.Copy(ctx, from, to, "orders", migrate.Options{Since: time.UnixMilli(2_000_000)}); err != nil || st.Rows != 1 {
		t.Fatalf("catch-up: %+v, %v; want the 1 row written after Since", st, err)
	}
	equal(t, ctx, from, to, "orders", false)
}

// TestCopyResume interrupts a copy after its first chunks, then resumes it: the target equals the
// source, and a resume with other options is refused before anything is written.
func TestCopyResume(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("indexed=%t", indexed), func(t *testing.T) {
			ctx := testkit.Context(t, time.Minute)
			from, to := open(t, "local"), open(t, "memory")
			load(t, ctx, from, indexed)
			cctx, cancel := context.WithCancel(ctx)
			opts := migrate.Options{As: "copy", AllVersions: true, ChunkRows: 100, Workers: 2,
				Progress: func(p migrate.Progress) {
					if p.Rows >= 500 {
						cancel()
					}
				}}
			st, err := migrate.Copy(cctx, from, to, "orders", opts)
			cancel()
			if !errors.Is(err, context.Canceled) || st.Rows >= rows {
				t.Fatalf("interrupted copy: %+v, %v; want canceled part-way", st, err)
			}
			opts.Progress = nil
			if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{As: "copy", AllVersions: true}); !errors.Is(err, migrate.ErrInterrupted) {
				t.Errorf("a new copy over an interrupted one: %v, want ErrInterrupted", err)
			}
			if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{As: "copy", Resume: true}); !errors.Is(err, migrate.ErrResumeMismatch) {
				t.Errorf("resume with other versions: %v, want ErrResumeMismatch", err)
			}
			opts.Resume = true
			rest, err := migrate.Copy(ctx, from, to, "orders", opts)
			if err != nil {
				t.Fatal(err)
			}
			if rest.Rows+st.Rows < rows || rest.Rows >= rows {
				t.Errorf("resumed copy wrote %d rows after %d, want the rest of %d", rest.Rows, st.Rows, rows)
			}
			if want := st.Since.Truncate(time.Millisecond); st.Since.IsZero() || !rest.Since.Equal(want) {
				t.Errorf("the resume's next Since %v, want the interrupted run's %v", rest.Since, want)
			}
			equal(t, ctx, from, to, "copy", true)
		})
	}
}

func TestCopyBadInput(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "memory")
	load(t, ctx, from, true)
	if _, err := to.CreateTable(ctx, "keyed", client.TableConfig{Salter: testkit.Salter(t, "hash:2"), KeySchema: testkit.Schema(t, "n:int64")}); err != nil {
		t.Fatal(err)
	}
	if _, err := to.CreateTable(ctx, "fam", client.TableConfig{Salter: testkit.Salter(t, "hash:2"), KeySchema: testkit.Schema(t, "id:string")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		to    *client.Client
		table string
		opts  migrate.Options
		want  error
	}{
		{"onto itself", from, "orders", migrate.Options{}, migrate.ErrSameTable},
		{"an index's table", to, client.IndexTableName("orders", "by_buyer"), migrate.Options{}, client.ErrInvalidArgument},
		{"no such table", to, "nope", migrate.Options{}, client.ErrTableNotFound},
		{"target with another key schema", to, "orders", migrate.Options{As: "keyed"}, client.ErrInvalidArgument},
		{"target without a family", to, "orders", migrate.Options{As: "fam"}, client.ErrInvalidArgument},
		{"resume with no checkpoint", to, "orders", migrate.Options{Resume: true}, client.ErrInvalidArgument},
		{"since in the future", to, "orders", migrate.Options{Since: time.Now().Add(time.Hour)}, client.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := migrate.Copy(ctx, from, tc.to, tc.table, tc.opts); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if names, _ := to.Tables(ctx); len(names) != 2 {
				t.Errorf("the target store has %v, want only the two tables made before", names)
			}
		})
	}
}

// TestCopyUnrecordedFamilies: a source whose families brine did not record (created before it
// did) is refused when the copy would have to create the target, and copied into a target created
// by hand.
func TestCopyUnrecordedFamilies(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "memory")
	meta := map[string]string{client.MetaSaltSpec: "hash:2"} // what CreateTable stored before brine.layout
	if err := from.Backend().CreateTable(ctx, "old", backends.TableOptions{Families: []string{"f"}, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	src, err := from.OpenTable(ctx, "old", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Put(ctx, []byte("k"), client.Cell{Family: "f", Qualifier: "q", Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Copy(ctx, from, to, "old", migrate.Options{}); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("copy creating the target: %v, want ErrInvalidArgument", err)
	}
	if names, _ := to.Tables(ctx); len(names) != 0 {
		t.Fatalf("the refused copy left %v", names)
	}
	if _, err := to.CreateTable(ctx, "old", client.TableConfig{Salter: testkit.Salter(t, "hash:3"), Families: []string{"f"}}); err != nil {
		t.Fatal(err)
	}
	if st, err := migrate.Copy(ctx, from, to, "old", migrate.Options{}); err != nil || st.Rows != 1 || st.Created {
		t.Fatalf("copy into the target made by hand: %+v, %v", st, err)
	}
}
