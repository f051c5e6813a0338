package local_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
)

func Example() {
	dir, err := os.MkdirTemp("", "brine")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	s, err := local.Open(ctx, local.Config{Path: filepath.Join(dir, "data.db"), NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	if err := s.CreateTable(ctx, "metrics", backends.TableOptions{Families: []string{"d"}, SplitKeys: [][]byte{{0x80}}}); err != nil {
		log.Fatal(err)
	}
	rowErrs, err := s.Apply(ctx, "metrics", []backends.Mutation{
		{Key: []byte("host1/0001"), Cells: []backends.Cell{{Family: "d", Qualifier: "cpu", Value: []byte("0.42"), Timestamp: 1}}},
		{Key: nil, Cells: []backends.Cell{{Family: "d", Qualifier: "cpu", Value: []byte("lost")}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("row 1:", rowErrs[1])

	for row, err := range s.Scan(ctx, "metrics", backends.Range{Start: []byte("host1/")}, backends.ScanOptions{}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %s:%s=%s\n", row.Key, row.Cells[0].Family, row.Cells[0].Qualifier, row.Cells[0].Value)
	}
	regions, _ := s.Regions(ctx, "metrics")
	fmt.Printf("regions start at %q\n", regions)
	// Output:
	// row 1: local: apply "metrics": brine: invalid key: empty key
	// host1/0001 d:cpu=0.42
	// regions start at ["" "\x80"]
}
