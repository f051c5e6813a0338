package main

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
)

// MetaKeySchema is the table-meta key under which `brine import --create --key` stores the key schema,
// so that later commands read and print keys as typed values without being told the schema again.
const MetaKeySchema = "brine.keys"

// keyFormat is how keys are given on the command line and printed: typed values through a key schema,
// hex, or text. Every format round-trips: what is printed is accepted back as it is, so a printed
// cursor (`--after`) always resumes where the page ended.
type keyFormat struct {
	hex    bool
	schema *keys.Schema // typed values, comma-separated (CSV quoting for values holding commas)
}

// parse turns a full key argument into a key.
func (kf keyFormat) parse(s string) ([]byte, error) {
	if kf.schema != nil {
		vals, err := kf.values(s)
		if err != nil {
			return nil, err
		}
		if len(vals) != kf.schema.Len() {
			return nil, fmt.Errorf("key %q: %d value(s), the key schema %q has %d fields", s, len(vals), kf.schema, kf.schema.Len())
		}
		k, err := kf.schema.Encode(vals...)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", s, err)
		}
		return k, nil
	}
	return kf.raw(s)
}

// prefix turns a key-prefix argument into a range: with a schema, the rows whose leading fields equal
// the values given (host1 does not match host12); else the rows whose key starts with the bytes.
func (kf keyFormat) prefix(s string) (client.Range, error) {
	if kf.schema == nil {
		p, err := kf.raw(s)
		return client.PrefixRange(p), err
	}
	vals, err := kf.values(s)
	if err != nil {
		return client.Range{}, err
	}
	start, end, err := kf.schema.PrefixRange(vals...)
	if err != nil {
		return client.Range{}, fmt.Errorf("prefix %q: %w", s, err)
	}
	return client.RowRange(start, end), nil
}

func (kf keyFormat) values(s string) ([]any, error) {
	r := csv.NewReader(strings.NewReader(s))
	text, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("key %q: want comma-separated values of %q: %w", s, kf.schema, err)
	}
	vals, err := kf.schema.ParseValues(text...)
	if err != nil {
		return nil, fmt.Errorf("key %q (schema %q): %w", s, kf.schema, err)
	}
	return vals, nil
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
		if vals, err := kf.schema.Decode(k); err == nil {
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			_ = w.Write(fieldTexts(vals))
			w.Flush()
			return strings.TrimSuffix(b.String(), "\n")
		}
		return strconv.Quote(string(k)) + "(not a " + kf.schema.String() + " key)"
	}
	if kf.hex {
		return hex.EncodeToString(k)
	}
	return printable(k)
}

// keyErr shows key in err as the CLI prints it: the client quotes a logical key's bytes, which with
// a key schema are its encoded form (tag bytes and all), or with --hex not the form the user gave.
func (kf keyFormat) keyErr(key []byte, err error) error {
	if err == nil || (kf.schema == nil && !kf.hex) {
		return err
	}
	quoted, text := strconv.Quote(string(key)), err.Error()
	if !strings.Contains(text, quoted) {
		return err
	}
	return &keyError{err: err, text: strings.ReplaceAll(text, quoted, shellQuote(kf.format(key)))}
}

// keyError is an error with its keys shown as the CLI prints them; errors.Is sees the original.
type keyError struct {
	err  error
	text string
}

func (e *keyError) Error() string { return e.text }
func (e *keyError) Unwrap() error { return e.err }

// fieldTexts are decoded key fields as ParseValues takes them back.
func fieldTexts(vals []any) []string {
	text := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case []byte:
			text[i] = string(x)
		default:
			text[i] = fmt.Sprint(x)
		}
	}
	return text
}

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
