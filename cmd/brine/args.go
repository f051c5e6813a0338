package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--h" || arg == "-help" || arg == "--help"
}

// takeVerbose takes -v out of args wherever it stands before a "--" (it is global: it may come
// before the command, after it or after its arguments), and reports whether it was there. A flag
// value that is "-v" itself is written --flag=-v.
func takeVerbose(args []string) (rest []string, verbose bool) {
	rest = make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(rest, args[i:]...), verbose
		}
		switch a {
		case "-v", "--v", "-v=true", "--v=true":
			verbose = true
		case "-v=false", "--v=false":
			verbose = false
		default:
			rest = append(rest, a)
		}
	}
	return rest, verbose
}

// subcommand finds the (sub)command among args, the first argument before a "--" that is one of
// names, wherever flags put it; rest is args without it.
func subcommand(args []string, names ...string) (name string, rest []string, found bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if slices.Contains(names, a) {
			return a, slices.Concat(args[:i:i], args[i+1:]), true
		}
	}
	return "", args, false
}

// groupVerb finds the subcommand of a command group (index, periods) among args: -h prints the
// group's usage (flag.ErrHelp), and a missing or unknown subcommand fails with the usage.
func groupVerb(env *cliEnv, group, usage string, args []string, names ...string) (string, []string, error) {
	verb, rest, found := subcommand(args, names...)
	switch {
	case found:
		return verb, rest, nil
	case slices.ContainsFunc(args, isHelp):
		fmt.Fprintln(env.stderr, usage)
		return "", nil, flag.ErrHelp
	case len(args) == 0 || strings.HasPrefix(args[0], "-"):
		return "", nil, errors.New(usage)
	}
	return "", nil, fmt.Errorf("unknown %s subcommand %q\n%s", group, args[0], usage)
}

// newFlagSet returns a flag set that reports errors instead of exiting, so run stays testable.
func newFlagSet(env *cliEnv, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("brine "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return fs
}
