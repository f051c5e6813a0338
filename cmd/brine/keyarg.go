package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
)

// keyFormat is how keys are given on the command line and printed: typed values through a key schema,
// hex, or text. Every format round-trips: what is printed is accepted back as it is, so a printed
// cursor (`--after`) always resumes where the page ended.
type keyFormat struct {
	hex    bool
	schema *keys.Schema // typed values, as keys.Schema.Format prints them
}

// parse turns a full key argument into a key.
func (kf keyFormat) parse(s string) ([]byte, error) {
	if kf.schema != nil {
		k, err := kf.schema.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", s, err)
		}
		return k, nil
	}
	return kf.raw(s)
}

// bound turns a --start or --end argument into a key: with a schema, the leading values of a key
// (fewer than its fields: the position before every key that begins with them), else as parse.
func (kf keyFormat) bound(s string) ([]byte, error) {
	if kf.schema == nil {
		return kf.raw(s)
	}
	vals, err := kf.schema.ParseText(s)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", s, err)
	}
	k, _, err := kf.schema.PrefixRange(vals...)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", s, err)
	}
	return k, nil
}

// prefix turns a key-prefix argument into a range: with a schema, the rows whose leading fields equal
// the values given (host1 does not match host12); else the rows whose key starts with the bytes. A
// typed prefix ending on a number field is refused (see typedPrefix).
func (kf keyFormat) prefix(s string) (client.Range, error) {
	if kf.schema == nil {
		p, err := kf.raw(s)
		return client.PrefixRange(p), err
	}
	vals, err := kf.schema.ParseText(s)
	if err == nil {
		err = typedPrefix(kf.schema, s, len(vals))
	}
	if err != nil {
		return client.Range{}, fmt.Errorf("prefix %q: %w", s, err)
	}
	start, end, err := kf.schema.PrefixRange(vals...)
	if err != nil {
		return client.Range{}, fmt.Errorf("prefix %q: %w", s, err)
	}
	return client.RowRange(start, end), nil
}

// typedPrefix refuses a prefix whose last value falls on a number field: a prefix matches whole
// field values, so 2026001 on an int64 field matches that number alone, never 20260015. Such a prefix
// answers nothing, silently, where the user meant leading digits; --start/--end say what is meant.
func typedPrefix(schema *keys.Schema, s string, n int) error {
	f := schema.Fields()[n-1]
	head := ""
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		head = s[:i+1]
	}
	if f.Kind == keys.KindInt64 || f.Kind == keys.KindUint64 {
		example := ""
		if v, err := strconv.ParseInt(strings.TrimPrefix(s, head), 10, 64); err == nil && v > math.MinInt64 && v < math.MaxInt64 {
			next := v + 1
			if f.Desc {
				next = v - 1 // a descending field's larger numbers come first
			}
			example = fmt.Sprintf(" (--start %s%d --end %s%d reads the rows of %d)", head, v, head, next, v)
		}
		return fmt.Errorf("field %s is a number (%s), and a prefix matches whole values, not leading digits: "+
			"it would match the number %s alone; use --start and --end for a range of numbers%s",
			f.Name, f.Kind, strings.TrimPrefix(s, head), example)
	}
	return nil
}

// raw parses hex, or text; text that starts with a double quote is a Go-quoted string, which is how
// format prints keys that are not plain text.
func (kf keyFormat) raw(s string) ([]byte, error) {
	if kf.hex {
		k, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("key %q is not hex: %w", s, err)
		}
		return k, nil
	}
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		if err != nil {
			return nil, fmt.Errorf("key %s: starts with a double quote but is not a quoted string (%w); write a literal quote as \"\\\"...\"", s, err)
		}
		return []byte(u), nil
	}
	return []byte(s), nil
}

// format prints a key in the form parse accepts. A key the schema cannot decode (written by something
// else) is printed Go-quoted with a note, rather than not at all.
func (kf keyFormat) format(k []byte) string {
	if kf.schema != nil {
		if s, err := kf.schema.Format(k); err == nil {
			return s
		}
		return strconv.Quote(string(k)) + "(not a " + kf.schema.String() + " key)"
	}
	if kf.hex {
		return hex.EncodeToString(k)
	}
	return printable(k)
}

// keyText is what @key ~ matches, the key as format prints it, the one rule of client.KeyRegexFilter
// on a table with a key schema: a key the schema cannot decode has none, and fails the match.
func (kf keyFormat) keyText(k []byte) ([]byte, bool) {
	if kf.schema != nil {
		s, err := kf.schema.Format(k)
		return []byte(s), err == nil
	}
	return []byte(kf.format(k)), true
}

// keyErr shows key in err as the CLI prints it, shell-quoted so that it can be pasted back: the
// client quotes a key as its table's key schema prints it (Go-quoted), or its bytes where the table
// has no schema (the form the user gave unless --hex, or a --key given for a table without one).
func (kf keyFormat) keyErr(key []byte, err error) error {
	if err == nil || (kf.schema == nil && !kf.hex) {
		return err
	}
	text := err.Error()
	for _, quoted := range []string{strconv.Quote(kf.format(key)), strconv.Quote(string(key))} {
		if strings.Contains(text, quoted) {
			return &keyError{err: err, text: strings.ReplaceAll(text, quoted, shellQuote(kf.format(key)))}
		}
	}
	return err
}

// keyError is an error with its keys shown as the CLI prints them; errors.Is sees the original.
type keyError struct {
	err  error
	text string
}

func (e *keyError) Error() string { return e.text }
func (e *keyError) Unwrap() error { return e.err }

// printable shows a key as text when it is text, Go-quoted when it is not (or when it starts with a
// quote, so that the two forms never collide).
func printable(b []byte) string {
	s := string(b)
	if strconv.CanBackquote(s) && !strings.ContainsAny(s, "` ") && !strings.HasPrefix(s, `"`) {
		return s
	}
	return strconv.Quote(s)
}

// shellQuote quotes an argument for a POSIX shell when it needs it, so printed commands can be pasted.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// parseArgs parses flags wherever they stand among the positional arguments (package flag stops at the
// first positional one, which would turn `get KEY --table t` into two keys); "--" ends the flags, for
// keys that begin with '-'.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
