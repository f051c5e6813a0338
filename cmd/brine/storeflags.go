package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// storeFlags are the flags every table command shares.
type storeFlags struct {
	store   string
	table   string
	hex     bool
	keySpec string
	verbose bool
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.store, "store", defaultStore, "store URL")
	fs.StringVar(&f.table, "table", "", "table name")
	fs.BoolVar(&f.verbose, "v", false, "verbose: the drivers' logs and whole server errors")
}

// parse parses a command's flags (fs holds f's), wherever they stand among its arguments, and turns
// on -v; it returns the positional arguments.
func (f *storeFlags) parse(env *cliEnv, fs *flag.FlagSet, args []string) ([]string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	env.applyVerbose(f.verbose)
	return pos, nil
}

// registerKeys adds the flags saying how keys are written: hex, or typed values through a key schema
// (default: the schema stored with the table by `import --create --key`, else text).
func (f *storeFlags) registerKeys(fs *flag.FlagSet) {
	fs.BoolVar(&f.hex, "hex", false, "keys are given and printed in hex")
	fs.StringVar(&f.keySpec, "key", "", "key schema, e.g. 'host,ts:int64': keys are given and printed as comma-separated typed values (default: the table's, if it has one)")
}

// keyFormat resolves how keys are written, from the flags and the schema stored with the table.
func (f *storeFlags) keyFormat(stored *keys.Schema) (keyFormat, error) {
	switch {
	case f.hex && f.keySpec != "":
		return keyFormat{}, errors.New("--hex and --key exclude each other")
	case f.hex:
		return keyFormat{hex: true}, nil
	case f.keySpec != "":
		s, err := keys.ParseSchema(f.keySpec)
		if err != nil {
			return keyFormat{}, fmt.Errorf("--key: %w", err)
		}
		return keyFormat{schema: s}, nil
	}
	return keyFormat{schema: stored}, nil
}

// openTable opens the store and the table named by the flags, with the key schema stored with it (nil
// when it has none); close the returned client when done.
func (f *storeFlags) openTable(ctx context.Context, env *cliEnv, salt string) (*client.Client, saltedTable, *keys.Schema, error) {
	if f.table == "" {
		return nil, nil, nil, errors.New("--table is required")
	}
	var s salting.Salter
	if salt != "" {
		var err error
		if s, err = salting.ParseSpec(salt); err != nil {
			return nil, nil, nil, err
		}
	}
	c, err := f.openClient(ctx, env)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*client.Client, saltedTable, *keys.Schema, error) {
		c.Close()
		switch {
		case errors.Is(err, client.ErrTableNotFound):
			err = fmt.Errorf("%w\n(no table %q in %s: 'brine tables' lists them; 'brine create' or 'brine import --create' makes one)", err, f.table, f.store)
		case errors.Is(err, client.ErrNoSpec):
			err = fmt.Errorf("%w\n(brine did not create table %q: give its spec with --salt, '--salt none' to read it unsalted)", err, f.table)
		}
		return nil, nil, nil, err
	}
	t, err := openSalted(ctx, c, f.table, s)
	if err != nil {
		return fail(err)
	}
	return c, t, t.KeySchema(), nil
}

// openClient opens an existing store: read commands and writes to existing tables never create one.
func (f *storeFlags) openClient(ctx context.Context, env *cliEnv) (*client.Client, error) {
	b, err := openStore(ctx, env, f.store, true)
	if err != nil {
		return nil, err
	}
	return env.newClient(b), nil
}

// tableCommand parses a table command's flags and opens its table and key format.
type tableCommand struct {
	storeFlags
	salt string // --salt: the spec of a table brine did not create (checked against a stored one)
	c    *client.Client
	t    client.TableAPI // a salted table, or a period table by its logical name
	kf   keyFormat
	pos  []string
}

// registerSalt adds --salt, for tables without a stored spec (brine refuses to guess theirs).
func (tc *tableCommand) registerSalt(fs *flag.FlagSet) {
	fs.StringVar(&tc.salt, "salt", "", "salting spec of a table brine did not create ('none': unsalted); checked against the table's when it has one")
}

// newRowCommand returns the flag set of a command on a table's rows (put, get, delete, scan), with
// the flags they share registered.
func newRowCommand(env *cliEnv, name string) (*flag.FlagSet, *tableCommand) {
	fs := newFlagSet(env, name)
	tc := &tableCommand{}
	tc.register(fs)
	tc.registerKeys(fs)
	tc.registerSalt(fs)
	return fs, tc
}

func (tc *tableCommand) open(ctx context.Context, env *cliEnv, fs *flag.FlagSet, args []string, nargs func(int) bool, usage string) error {
	pos, err := tc.parse(env, fs, args)
	if err != nil {
		return err
	}
	if !nargs(len(pos)) {
		return errors.New(usage)
	}
	tc.pos = pos
	if _, err := tc.keyFormat(nil); err != nil { // flag errors before any store is opened
		return err
	}
	c, t, stored, err := tc.openTable(ctx, env, tc.salt)
	if err != nil {
		return err
	}
	tc.c = c
	if tc.t, err = periodsOrTable(ctx, c, tc.table, t); err != nil {
		c.Close()
		return err
	}
	if tc.kf, err = tc.keyFormat(stored); err != nil {
		c.Close()
		return err
	}
	return nil
}
