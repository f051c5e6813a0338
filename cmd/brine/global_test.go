package main

import (
	"context"
	"testing"
)

// Help exits 0 wherever it is asked for, and the global flags (-v, and the store flags every table
// command shares) may come before the command, between it and its subcommand, or after its arguments.
func TestCLIHelpAndGlobalFlags(t *testing.T) {
	c := newCLI(t)
	verbose := 0
	c.env.verbose = func() { verbose++ }
	c.ok("create", "--store", c.store, "--table", "t", "--salt", "hash:4")
	c.ok("put", "--store", c.store, "--table", "t", "k1", "d:v=1")

	tests := []struct {
		name    string
		args    []string
		exit    int  // exitCode of run's error
		verbose bool // -v reached the environment
		rows    int  // for scans: rows printed (-1: not a scan)
	}{
		{"brine -h", []string{"-h"}, 0, false, -1},
		{"brine --help", []string{"--help"}, 0, false, -1},
		{"periods -h", []string{"periods", "-h"}, 0, false, -1},
		{"periods --help", []string{"periods", "--help"}, 0, false, -1},
		{"index -h", []string{"index", "-h"}, 0, false, -1},
		{"index --help", []string{"index", "--help"}, 0, false, -1},
		{"index list -h", []string{"index", "list", "-h"}, 0, false, -1},
		{"periods list -h", []string{"periods", "list", "-h"}, 0, false, -1},
		{"scan -h", []string{"scan", "-h"}, 0, false, -1},
		{"-v before the command", []string{"-v", "scan", "--store", c.store, "--table", "t"}, 0, true, 1},
		{"-v after the arguments", []string{"scan", "--store", c.store, "--table", "t", "-v"}, 0, true, 1},
		{"store before the command", []string{"--store", c.store, "scan", "--table", "t"}, 0, false, 1},
		{"-v and store before the command", []string{"-v", "--store", c.store, "--table", "t", "scan"}, 0, true, 1},
		{"-v before index", []string{"-v", "index", "list", "--store", c.store, "t"}, 0, true, -1},
		{"store between index and its verb", []string{"index", "--store", c.store, "list", "t"}, 0, false, -1},
		{"-v between periods and its verb", []string{"periods", "-v", "list", "--store", c.store, "nope"}, 1, true, -1},
		{"no command", nil, 1, false, -1},
		{"unknown command", []string{"frobnicate"}, 1, false, -1},
		{"unknown index verb", []string{"index", "frob", "t"}, 1, false, -1},
		{"unknown periods verb", []string{"periods", "rotate", "p"}, 1, false, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			verbose = 0
			out, errOut, err := c.run(context.Background(), tc.args...)
			if got := exitCode(context.Background(), err); got != tc.exit {
				t.Fatalf("brine %q: exit %d, want %d (err %v)\nstderr: %s", tc.args, got, tc.exit, err, errOut)
			}
			if got := verbose > 0; got != tc.verbose {
				t.Errorf("verbose = %v, want %v", got, tc.verbose)
			}
			if tc.rows >= 0 {
				if rows := parseRows(t, out); len(rows) != tc.rows {
					t.Errorf("%d rows, want %d", len(rows), tc.rows)
				}
			}
		})
	}
}
