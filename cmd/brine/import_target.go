package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The table an import writes, and the key schema its rows' keys are encoded with.

// keySchema is the schema rows' keys are encoded with: --key, else the one stored with the table.
func (f *importFlags) keySchema(ctx context.Context, env *cliEnv) (*keys.Schema, error) {
	if f.key != "" {
		s, err := keys.ParseSchema(f.key)
		if err != nil {
			return nil, fmt.Errorf("--key: %w", err)
		}
		return s, nil
	}
	if f.create {
		return nil, errors.New("--key is required with --create: the key columns, e.g. 'host,ts:int64'")
	}
	c, _, stored, err := f.openTable(ctx, env, f.salt)
	if err != nil {
		return nil, err
	}
	c.Close()
	if stored == nil {
		return nil, fmt.Errorf("--key is required: table %s stores no key schema (give the key columns, e.g. 'host,ts:int64')", f.table)
	}
	return stored, nil
}

// openOrCreate opens (or, with -create, creates) the import's target table, a salted table or a
// period table by its logical name, and checks that the key schema stored with it, if any, is the
// import's.
func (f *importFlags) openOrCreate(ctx context.Context, env *cliEnv, schema *keys.Schema) (*client.Client, client.TableAPI, error) {
	if !f.create {
		c, t, stored, err := f.openTable(ctx, env, f.salt)
		if err != nil {
			return nil, nil, err
		}
		if stored != nil && stored.String() != schema.String() {
			c.Close()
			return nil, nil, fmt.Errorf("--key %q: table %s was created with key schema %q", schema, f.table, stored)
		}
		p, err := openPeriods(ctx, c, f.table)
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		if p != nil {
			return c, p, nil
		}
		return c, t, nil
	}
	if f.table == "" {
		return nil, nil, errors.New("--table is required")
	}
	if f.salt == "" {
		return nil, nil, errors.New("--salt is required with -create")
	}
	s, err := salting.ParseSpec(f.salt)
	if err != nil {
		return nil, nil, err
	}
	b, err := openStore(ctx, env, f.store, false)
	if err != nil {
		return nil, nil, err
	}
	c := env.newClient(b)
	t, err := c.CreateTable(ctx, f.table, client.TableConfig{
		Salter: s, Families: []string{f.family}, KeySchema: schema,
	})
	if errors.Is(err, client.ErrTableExists) {
		// A re-run of the same command: the table is used if it is the one the command creates.
		c.Close()
		f.create = false
		c, t, err := f.openOrCreate(ctx, env, schema)
		if err != nil {
			return nil, nil, fmt.Errorf("--create: table %s exists, and does not match: %w", f.table, err)
		}
		fmt.Fprintf(env.stderr, "table %s exists with salt %s: importing into it\n", f.table, s.Spec())
		return c, t, nil
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, t, nil
}

// fence takes the exclusive fence of the import's table (--exclusive; --resume takes over the one a
// killed exclusive import left).
func (f *importFlags) fence(ctx context.Context, env *cliEnv, t client.TableAPI) (*client.ExclusiveTable, error) {
	if !f.exclusive {
		return nil, errors.New("--resume takes over an exclusive import's fence: give --exclusive too")
	}
	it, ok := t.(*client.Table) // not a period table
	if !ok || len(it.Indexes()) == 0 {
		return nil, fmt.Errorf("--exclusive: table %s has no indexes: a plain import writes at bulk speed already", f.table)
	}
	return fenceIndexed(ctx, env, it, f.resume)
}

// releaseFence ends an exclusive import, interrupted or not: the indexes are made exact and active
// again, and the other writers may write. It runs to its end even after an interrupt.
func releaseFence(ctx context.Context, env *cliEnv, x *client.ExclusiveTable) error {
	if err := x.Release(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("%w\n(the fence stays until its lease runs out: run the import again with --exclusive --resume to finish)", err)
	}
	fmt.Fprintf(env.stderr, "exclusive: %s released: its indexes are exact and active\n", x.Name())
	return nil
}
