package salting

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/keys"
)

// Limits shared by the strategies.
const (
	maxBuckets   = 65536   // a 2-byte prefix; BucketRanges lists every bucket, so more would not pay
	maxPrefixLen = 1 << 16 // prefix=L, offset=O
	maxFields    = 255     // fields=K; field=kF takes F < maxFields (keys allows 255 fields)
)

// ParseSpec parses a salting spec as a user writes it: a flag, a Go program's configuration. Spec()
// of the result is the canonical form of the same salter, which both ParseSpec and ParseStoredSpec
// read back. A spec read from a store (a table's meta, a rebucket's directory, a checkpoint) goes to
// ParseStoredSpec instead, which also reads the spellings earlier brines stored.
//
//	spec     = "hash:" N [":digits=" D] [":" lead]    N in 1..65536; bucket = fmix32(fnv1a32(part)) % N
//	         | "md5hex:" C [":" lead]                 C in 1..4; prefix = first C hex digits of md5(part)
//	         | "mod:" N ":" ("offset=" O "," "width=" W | "field=k" F) [",digits=" D]
//	         | "reverse" [":" lead]
//	         | "phoenix:" N                           N in 1..256 (Apache Phoenix SALT_BUCKETS)
//	         | "opentsdb:" N [":width=" W] [",metric=" M]   W in 1..4 (default 1), M in 1..8 (default 3)
//	         | "none"
//	lead     = "prefix=" L     the first L bytes of the key (all of it if shorter)
//	         | "fields=" K     the first K fields of a key encoded with package keys (a count)
//	         | "sep=" B        the bytes before the first B (all of the key if there is none);
//	                           B is a character or 0xHH ("sep=0x2c" for ',')
//
// Without lead, part is the whole key. Options after the number may be separated by ':' or ','.
// hash and mod write the bucket as a 1-byte prefix for N <= 256, else 2 bytes big-endian, or with
// digits=D as D decimal digits, zero-padded (D in 1..5, 10^D >= N: "hash:16:digits=2" writes "00" to
// "15"); md5hex writes C lower-case hex digits (16^C buckets); opentsdb writes W bytes. The text
// prefixes (md5hex, digits=D) suit STRING key columns, such as Tablestore partition keys. mod reads an unsigned
// big-endian integer of W (1..8) bytes at offset O, or the Int64/Uint64 field kF of a keys-encoded
// key, and takes it modulo N. Examples: "hash:16", "hash:64:fields=1", "md5hex:4:prefix=6",
// "mod:16:offset=0,width=8", "mod:8:field=k1", "reverse:sep=0x2c", "phoenix:8", "opentsdb:20:width=1", "none".
//
// Fields are numbered from 0, as everywhere in brine (keys.FieldSpan, an index's key parts, a
// period table's time field): kF is the key's field F, k0 the first. Brines before this one wrote
// "mod:N:field=K", K counted from 1; ParseSpec refuses that spelling, with the spec to write instead
// ("mod:8:field=2" is "mod:8:field=k1"), so that no K is read with the other meaning.
//
// Bucket pruning in BucketRanges: a range holding a single key ([k, k+"\x00")) touches one bucket
// under every strategy; a range within one leading value (start holds the whole leading part and end
// does not pass keys.PrefixEnd of it; an empty end only if that is nil) touches one bucket under hash and
// md5hex with a lead; mod touches only the residues of the integers a range can hold when there are
// fewer than N. reverse has one bucket and keeps key order only within one leading value: every other
// range, the full table included, is ErrUnorderedRange.
func ParseSpec(spec string) (Salter, error) { return parse(spec, false) }

// ParseStoredSpec parses a spec that brine stored: ParseSpec's form, and every spelling an earlier
// brine stored, with the meaning it had then. The one such spelling is "mod:N:field=K", which reads
// the key's field K counted from 1 (its Spec() is "mod:N:field=kF", F = K-1): a table created with
// it keeps its buckets. Spec() gives the current spelling; the stored string is left as it was.
func ParseStoredSpec(spec string) (Salter, error) { return parse(spec, true) }

// CanonicalSpec is the spelling Spec() gives for a stored spec, or stored itself when it does not
// parse. Compare a stored spec with a salter's as CanonicalSpec(stored) == s.Spec(): two spellings
// of one salting are then equal.
func CanonicalSpec(stored string) string {
	s, err := ParseStoredSpec(stored)
	if err != nil {
		return stored
	}
	return s.Spec()
}

func parse(spec string, stored bool) (Salter, error) {
	s, err := parseSpec(spec, stored)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrInvalidSpec, spec, err)
	}
	return s, nil
}

// parser builds a salter from the spec's tokens after "name:" (none when the spec is the bare name);
// stored says the spec comes from a store, so an earlier brine's spelling is read (ParseStoredSpec).
type parser func(tokens []string, stored bool) (Salter, error)

// parsers is the registry of strategies by spec name: a new strategy is its parser here and its
// salter in a file of its own. Read-only after initialisation.
var parsers = map[string]parser{
	"none":     parseNone,
	"reverse":  parseReverse,
	"hash":     numbered("hash", parseHash),
	"md5hex":   numbered("md5hex", parseMD5Hex),
	"mod":      numbered("mod", parseMod),
	"phoenix":  numbered("phoenix", parsePhoenix),
	"opentsdb": numbered("opentsdb", parseOpenTSDB),
}

// strategyNames lists the registry's names for error messages, in the order the docs give them.
const strategyNames = "hash, md5hex, mod, reverse, phoenix, opentsdb or none"

func parseSpec(spec string, stored bool) (Salter, error) {
	name, rest, hasRest := strings.Cut(spec, ":")
	var tokens []string
	if hasRest {
		tokens = strings.FieldsFunc(rest, func(r rune) bool { return r == ':' || r == ',' })
		// FieldsFunc drops empty tokens; a spec with one ("hash::16", "hash:16:") is malformed.
		if strings.Count(rest, ":")+strings.Count(rest, ",")+1 != len(tokens) {
			return nil, fmt.Errorf("empty option")
		}
	}
	parse, ok := parsers[name]
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q (want %s)", name, strategyNames)
	}
	return parse(tokens, stored)
}

// numbered wraps the parser of a strategy whose spec starts with a number ("hash:16"), refusing a
// spec without one.
func numbered(name string, parse parser) parser {
	return func(tokens []string, stored bool) (Salter, error) {
		if len(tokens) == 0 {
			return nil, fmt.Errorf("%s needs a number: %s:N", name, name)
		}
		return parse(tokens, stored)
	}
}

func parseNone(tokens []string, _ bool) (Salter, error) {
	if len(tokens) > 0 {
		return nil, fmt.Errorf("none takes no options")
	}
	return identity{}, nil
}

func parseReverse(tokens []string, _ bool) (Salter, error) {
	opts, err := parseOptions(tokens, "prefix", "fields", "sep")
	if err != nil {
		return nil, err
	}
	l, err := opts.lead()
	if err != nil {
		return nil, err
	}
	return reverser{lead: l}, nil
}

func parseHash(tokens []string, _ bool) (Salter, error) {
	n, l, extra, err := parseCountAndLead("bucket count", tokens, maxBuckets, "digits")
	if err != nil {
		return nil, err
	}
	d, err := extra.digits(n)
	if err != nil {
		return nil, err
	}
	return &prefixed{spec: fmt.Sprintf("hash:%d%s%s", n, digitsSuffix(":", d), l.suffix()), n: n, decLen: d,
		width: prefixWidth(n), st: hashStrategy{n: uint32(n), lead: l}}, nil
}

func parseMD5Hex(tokens []string, _ bool) (Salter, error) {
	c, l, _, err := parseCountAndLead("hex digit count", tokens, 4)
	if err != nil {
		return nil, err
	}
	return &prefixed{spec: fmt.Sprintf("md5hex:%d%s", c, l.suffix()), n: 1 << (4 * c), hexLen: c,
		st: md5Strategy{digits: c, lead: l}}, nil
}

func parseMod(tokens []string, stored bool) (Salter, error) {
	n, err := parseNum("bucket count", tokens[0], 1, maxBuckets)
	if err != nil {
		return nil, err
	}
	opts, err := parseOptions(tokens[1:], "offset", "width", "field", "digits")
	if err != nil {
		return nil, err
	}
	d, err := opts.digits(n)
	if err != nil {
		return nil, err
	}
	delete(opts, "digits")
	m := modStrategy{n: n}
	if f, ok := opts["field"]; ok {
		if len(opts) != 1 {
			return nil, fmt.Errorf("mod: field= excludes offset and width")
		}
		m.byField = true
		legacy := !strings.HasPrefix(f, "k")
		if m.field, err = parseField(f, legacy); err != nil {
			return nil, err
		}
		spec := fmt.Sprintf("mod:%d:field=k%d%s", n, m.field, digitsSuffix(",", d))
		if legacy && !stored {
			return nil, fmt.Errorf("field=%s counts fields from 1, brine's old spelling; write %s: fields count from 0 (k0 is the first)", f, spec)
		}
		return &prefixed{spec: spec, n: n, decLen: d, width: prefixWidth(n), st: m}, nil
	}
	w, ok := opts["width"]
	if !ok {
		return nil, fmt.Errorf("mod needs width=W (and offset=O, default 0) or field=kF")
	}
	if m.width, err = parseNum("width", w, 1, 8); err != nil {
		return nil, err
	}
	if o, ok := opts["offset"]; ok {
		if m.offset, err = parseNum("offset", o, 0, maxPrefixLen); err != nil {
			return nil, err
		}
	}
	return &prefixed{spec: fmt.Sprintf("mod:%d:offset=%d,width=%d%s", n, m.offset, m.width, digitsSuffix(",", d)), n: n,
		decLen: d, width: prefixWidth(n), st: m}, nil
}

// parseField reads mod's field=kF, F counted from 0, or with legacy the earlier brines' field=K, K
// counted from 1; it returns the field counted from 0.
func parseField(v string, legacy bool) (int, error) {
	var f int
	var err error
	if legacy {
		f, err = parseNum("field", v, 1, maxFields)
		f--
	} else {
		f, err = parseNum("field", v[1:], 0, maxFields-1)
	}
	if err != nil {
		return 0, fmt.Errorf("field=%s: want field=kF, F the key field counted from 0 (k0 to k%d)", v, maxFields-1)
	}
	return f, nil
}

func parsePhoenix(tokens []string, _ bool) (Salter, error) {
	n, err := parseNum("bucket count", tokens[0], 1, 256)
	if err != nil {
		return nil, err
	}
	if len(tokens) > 1 {
		return nil, fmt.Errorf("phoenix takes no options")
	}
	return &prefixed{spec: fmt.Sprintf("phoenix:%d", n), n: n, width: 1, st: phoenixStrategy{n: int32(n)}}, nil
}

func parseOpenTSDB(tokens []string, _ bool) (Salter, error) {
	n, err := parseNum("bucket count", tokens[0], 1, maxBuckets)
	if err != nil {
		return nil, err
	}
	opts, err := parseOptions(tokens[1:], "width", "metric")
	if err != nil {
		return nil, err
	}
	w, metric := 1, 3
	if v, ok := opts["width"]; ok {
		if w, err = parseNum("width", v, 1, 4); err != nil {
			return nil, err
		}
	}
	if v, ok := opts["metric"]; ok {
		if metric, err = parseNum("metric", v, 1, 8); err != nil {
			return nil, err
		}
	}
	if w < 3 && n > 1<<(8*w) {
		return nil, fmt.Errorf("opentsdb: %d buckets do not fit a %d-byte salt", n, w)
	}
	canon := fmt.Sprintf("opentsdb:%d:width=%d", n, w)
	if metric != 3 {
		canon += fmt.Sprintf(",metric=%d", metric)
	}
	return &prefixed{spec: canon, n: n, width: w, st: opentsdbStrategy{n: int32(n), metric: metric}}, nil
}

type options map[string]string

// parseOptions reads key=value tokens, each key at most once and among allowed.
func parseOptions(tokens []string, allowed ...string) (options, error) {
	opts := options{}
	for _, t := range tokens {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return nil, fmt.Errorf("option %q is not key=value", t)
		}
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			return nil, fmt.Errorf("unknown option %q (allowed: %s)", k, strings.Join(allowed, ", "))
		}
		if _, dup := opts[k]; dup {
			return nil, fmt.Errorf("option %q given twice", k)
		}
		opts[k] = v
	}
	return opts, nil
}

// parseCountAndLead parses "N[:prefix=..|fields=..|sep=..]" of the strategies that salt the
// whole key or its leading part: N in [1, hi] (what names it in errors), then the lead options and
// the extra options allowed, returned apart.
func parseCountAndLead(what string, tokens []string, hi int, extra ...string) (int, lead, options, error) {
	n, err := parseNum(what, tokens[0], 1, hi)
	if err != nil {
		return 0, lead{}, nil, err
	}
	opts, err := parseOptions(tokens[1:], append([]string{"prefix", "fields", "sep"}, extra...)...)
	if err != nil {
		return 0, lead{}, nil, err
	}
	rest := options{}
	for _, k := range extra {
		if v, ok := opts[k]; ok {
			rest[k] = v
			delete(opts, k)
		}
	}
	l, err := opts.lead()
	if err != nil {
		return 0, lead{}, nil, err
	}
	return n, l, rest, nil
}

// maxDigits is the most decimal digits a prefix needs (maxBuckets-1 has 5).
const maxDigits = 5

// digits reads digits=D (0 when absent): a text prefix of D decimal digits, enough for n buckets.
func (o options) digits(n int) (int, error) {
	v, ok := o["digits"]
	if !ok {
		return 0, nil
	}
	d, err := parseNum("digits", v, 1, maxDigits)
	if err != nil {
		return 0, err
	}
	if pow10(d) < n {
		return 0, fmt.Errorf("%d buckets do not fit %d decimal digits", n, d)
	}
	return d, nil
}

func digitsSuffix(sep string, d int) string {
	if d == 0 {
		return ""
	}
	return fmt.Sprintf("%sdigits=%d", sep, d)
}

// lead reads the at most one of prefix=L, fields=K, sep=B.

func (o options) lead() (lead, error) {
	if len(o) > 1 {
		return lead{}, fmt.Errorf("give at most one of prefix=, fields=, sep=")
	}
	var err error
	var l lead
	if v, ok := o["prefix"]; ok {
		l.mode = leadPrefix
		l.n, err = parseNum("prefix", v, 1, maxPrefixLen)
	}
	if v, ok := o["fields"]; ok {
		l.mode = leadFields
		l.n, err = parseNum("fields", v, 1, maxFields)
	}
	if v, ok := o["sep"]; ok {
		l.mode = leadSep
		l.sep, err = keys.ParseByte(v)
	}
	return l, err
}

// parseNum parses a decimal in [lo, hi]: digits only, no sign, no leading zeros.
func parseNum(what, s string, lo, hi int) (int, error) {
	ok := s != "" && len(s) <= 9 && (s == "0" || s[0] != '0')
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] >= '0' && s[i] <= '9'
	}
	if !ok {
		return 0, fmt.Errorf("%s %q is not a number", what, s)
	}
	n, _ := strconv.Atoi(s)
	if n < lo || n > hi {
		return 0, fmt.Errorf("%s %d not in %d..%d", what, n, lo, hi)
	}
	return n, nil
}
