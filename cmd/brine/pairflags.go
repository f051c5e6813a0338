package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
)

// pairFlags are the flags of a command on two tables, one per store (verify, copy): --from, --to
// and --as name them, and the range and version flags say which cells.
type pairFlags struct {
	from, to                   storeFlags
	toStore, as                *string
	start, end, prefix, verStr *string
	shard                      shardFlag
}

// register adds the flags; verb says what the command does with the --from table's rows.
func (p *pairFlags) register(fs *flag.FlagSet, verb, toHelp string) {
	fs.StringVar(&p.from.store, "from", defaultStore, "store URL of the table "+verb)
	p.toStore = fs.String("to", "", toHelp+" (default: --from's)")
	p.as = fs.String("as", "", "the table's name on --to (default: TABLE)")
	fs.BoolVar(&p.from.verbose, "v", false, "verbose: the drivers' logs and whole server errors")
	p.from.registerKeys(fs)
	p.start = fs.String("start", "", "first key (inclusive), as scan takes it")
	p.end = fs.String("end", "", "end key (exclusive), as scan takes it")
	p.prefix = fs.String("prefix", "", "only keys with this prefix, as scan takes it")
	p.verStr = fs.String("versions", "latest", "latest: the newest version of each cell; all: every version the table keeps")
	fs.Var(&p.shard, "shard", "I/N: only shard I (0 to N-1) of N of the --from table's rows, by its buckets then key ranges; "+
		"N processes with the same flags and I = 0 to N-1 do it all (a Kubernetes Indexed Job: --shard $JOB_COMPLETION_INDEX/N)")
}

// shardFlag is --shard I/N. brine reads no environment variable for it: a job runner's index comes
// in through the shell, as --shard $JOB_COMPLETION_INDEX/N, where the command line shows it.
type shardFlag struct{ compare.Shard }

func (f *shardFlag) String() string { return f.Shard.String() }

func (f *shardFlag) Set(s string) error {
	sh, err := compare.ParseShard(s)
	if err != nil {
		return err
	}
	f.Shard = sh
	return nil
}

// resumeFlag is --resume (finish the interrupted job; without its checkpoint, an error) or
// --resume=auto (finish it if its checkpoint is there, else start it): one command line for a job
// runner's first try and its retries.
type resumeFlag struct{ on, auto bool }

func (f *resumeFlag) IsBoolFlag() bool { return true }

func (f *resumeFlag) String() string {
	switch {
	case f.auto:
		return "auto"
	case f.on:
		return "true"
	}
	return "false"
}

func (f *resumeFlag) Set(s string) error {
	switch s {
	case "auto":
		f.on, f.auto = false, true
		return nil
	}
	on, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false or auto")
	}
	f.on, f.auto = on, false
	return nil
}

// resolve is whether to resume: with auto, whether interrupted finds a checkpoint waiting.
func (f *resumeFlag) resolve(ctx context.Context, interrupted func(context.Context) (bool, error)) (bool, error) {
	if !f.auto {
		return f.on, nil
	}
	ok, err := interrupted(ctx)
	if err != nil {
		return false, fmt.Errorf("--resume=auto: %w", err)
	}
	return ok, nil
}

// of is " (shard I/N)" for a sharded command's messages, "" otherwise.
func (f *shardFlag) of() string {
	if !f.Sharded() {
		return ""
	}
	return " (shard " + f.String() + ")"
}

// parse reads the arguments (one table) and checks the flags that need no store.
func (p *pairFlags) parse(env *cliEnv, fs *flag.FlagSet, args []string, usage string) error {
	pos, err := p.from.parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(usage)
	}
	p.from.table = pos[0]
	p.to = storeFlags{store: *p.toStore, table: *p.as, verbose: p.from.verbose}
	if p.to.store == "" {
		p.to.store = p.from.store
	}
	if p.to.table == "" {
		p.to.table = p.from.table
	}
	if *p.prefix != "" && (*p.start != "" || *p.end != "") {
		return errors.New("--prefix and --start/--end exclude each other")
	}
	if *p.verStr != "latest" && *p.verStr != "all" {
		return fmt.Errorf("--versions %q: want latest or all", *p.verStr)
	}
	_, err = p.from.keyFormat(nil) // flag errors before any store is opened
	return err
}

// open opens the two stores' clients, one client when both are one store (the embedded store allows
// one opening at a time); createTo lets --to's store be made (a copy may be its first table, as
// import --create's may). closeFn closes them.
func (p *pairFlags) open(ctx context.Context, env *cliEnv, createTo bool) (a, b *client.Client, closeFn func(), err error) {
	if a, err = p.from.openClient(ctx, env); err != nil {
		return nil, nil, nil, fmt.Errorf("--from: %w", err)
	}
	if p.sameStore() {
		return a, a, func() { _ = a.Close() }, nil
	}
	tb, err := openStore(ctx, env, p.to.store, !createTo)
	if err != nil {
		_ = a.Close()
		return nil, nil, nil, fmt.Errorf("--to: %w", err)
	}
	b = env.newClient(tb)
	return a, b, func() { _ = b.Close(); _ = a.Close() }, nil
}

// sameStore reports whether --from and --to name one store, however spelled: a local:// file by
// its canonical path (local:///w/./x.db is local:///w/x.db), its parameters aside.
func (p *pairFlags) sameStore() bool {
	return canonicalStore(p.from.store) == canonicalStore(p.to.store)
}

// sameTable reports whether --from's table and --to's are one table of one store.
func (p *pairFlags) sameTable() bool { return p.sameStore() && p.from.table == p.to.table }

// canonicalStore is what identifies the store a URL names: for a local:// file, its absolute path
// with links resolved (as far as it exists); other URLs as given.
func canonicalStore(raw string) string {
	path, ok := localPath(raw)
	if !ok {
		return raw
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return raw
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs)) // a file not made yet, in a directory that is
	}
	return "local://" + abs
}

func (p *pairFlags) allVersions() bool { return *p.verStr == "all" }

func (p *pairFlags) ranged() bool { return *p.start != "" || *p.end != "" || *p.prefix != "" }

// commandLine is the command name with the flags fs was given, but skip, and then tail: the command
// that resumes an interrupted one.
func commandLine(fs *flag.FlagSet, name string, skip []string, tail ...string) string {
	parts := []string{name}
	fs.Visit(func(fl *flag.Flag) {
		if slices.Contains(skip, fl.Name) {
			return
		}
		if bf, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			if fl.Value.String() == "true" {
				parts = append(parts, "--"+fl.Name)
			}
			return
		}
		parts = append(parts, "--"+fl.Name+"="+shellQuote(fl.Value.String()))
	})
	for _, t := range tail {
		parts = append(parts, shellQuote(t))
	}
	return strings.Join(parts, " ")
}
