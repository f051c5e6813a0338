// Package filterexpr parses brine's filter expressions, such as the CLI's --filter takes, into a
// client.Filter: `status = paid and (ts > 2026-01-01 or not d:note ~ "^urgent")`.
//
// The syntax:
//
//	expr   = and { "or" and }
//	and    = unary { "and" unary }
//	unary  = "not" unary | "(" expr ")" | column op value
//	op     = "=" | "!=" | "<" | "<=" | ">" | ">=" | "~" (RE2 regex, matches anywhere unless anchored)
//
// A column is family:qualifier, or a qualifier in the default family; @key is the row key as the
// table's key schema prints it (typed values), which takes ~ only (ranges are a scan's range, not a
// filter's). A value is a bare word or a quoted string ("..." or '...', Go escapes inside double
// quotes). Every comparison compares numbers when the value is a number (amt > 100, amt = 12.5
// matching 12.50) and times when it is a date or RFC 3339 time (ts > 2026-01-01, against
// milliseconds since 1970, a date or RFC 3339), else bytes; = and != compare a column value that is
// not a number (a time) as bytes. Keywords are case-insensitive. @family, @qualifier and @cells trim
// the cells of a row (cells.go).
package filterexpr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/client"
)

// keyPseudoColumn names the row key (the logical key, as --start and --end take it).
const keyPseudoColumn = "@key"

// maxFilterDepth bounds nesting, so that a hostile expression cannot exhaust the stack.
const maxFilterDepth = 64

type filterToken struct {
	text   string // the word, operator or parenthesis; a quoted string unquoted
	quoted bool
	pos    int // byte offset in the expression
}

type filterParser struct {
	toks   []filterToken
	i      int
	family string
	depth  int
}

// Parse parses an expression; bare qualifiers are in family. Its errors say where the expression
// went wrong.
func Parse(expr, family string) (client.Filter, error) {
	toks, err := lexFilter(expr)
	if err != nil {
		return client.Filter{}, err
	}
	if len(toks) == 0 {
		return client.Filter{}, fmt.Errorf("empty expression")
	}
	p := &filterParser{toks: toks, family: family}
	f, err := p.or()
	if err != nil {
		return client.Filter{}, err
	}
	if p.i < len(p.toks) {
		return client.Filter{}, p.errorf("unexpected %q", p.toks[p.i].text)
	}
	if f, err = joinCells(f); err != nil {
		return client.Filter{}, err
	}
	if err := driverkit.CheckLogicalFilter(&f, nil); err != nil { // a cell filter under or or not
		return client.Filter{}, fmt.Errorf("%w", err)
	}
	return f, nil
}

func lexFilter(s string) ([]filterToken, error) {
	var out []filterToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == '~':
			out = append(out, filterToken{text: s[i : i+1], pos: i})
			i++
		case c == '=' || c == '!' || c == '<' || c == '>':
			n := 1
			if i+1 < len(s) && s[i+1] == '=' && c != '=' {
				n = 2
			}
			if c == '!' && n == 1 {
				return nil, fmt.Errorf("at %d: '!' must be followed by '=' (use not for negation)", i)
			}
			out = append(out, filterToken{text: s[i : i+n], pos: i})
			i += n
		case c == '"' || c == '\'':
			end := i + 1
			for end < len(s) && s[end] != c {
				if s[end] == '\\' && c == '"' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, fmt.Errorf("at %d: unterminated string", i)
			}
			text := s[i+1 : end]
			if c == '"' {
				u, err := strconv.Unquote(s[i : end+1])
				if err != nil {
					return nil, fmt.Errorf("at %d: bad string %s: %w", i, s[i:end+1], err)
				}
				text = u
			}
			out = append(out, filterToken{text: text, quoted: true, pos: i})
			i = end + 1
		default:
			end := i
			for end < len(s) && !strings.ContainsRune(" \t\n\r()~=!<>\"'", rune(s[end])) {
				end++
			}
			out = append(out, filterToken{text: s[i:end], pos: i})
			i = end
		}
	}
	return out, nil
}

func (p *filterParser) errorf(format string, args ...any) error {
	at := "the end"
	if p.i < len(p.toks) {
		at = strconv.Itoa(p.toks[p.i].pos)
	}
	return fmt.Errorf("at %s: %s", at, fmt.Sprintf(format, args...))
}

// keyword reports whether the next token is the unquoted keyword kw, and consumes it if so.
func (p *filterParser) keyword(kw string) bool {
	if p.i < len(p.toks) && !p.toks[p.i].quoted && strings.EqualFold(p.toks[p.i].text, kw) {
		p.i++
		return true
	}
	return false
}

func (p *filterParser) or() (client.Filter, error) {
	return p.list("or", p.and, client.AnyFilter)
}

func (p *filterParser) and() (client.Filter, error) {
	return p.list("and", p.unary, client.AllFilters)
}

func (p *filterParser) list(kw string, next func() (client.Filter, error), join func(...client.Filter) client.Filter) (client.Filter, error) {
	f, err := next()
	if err != nil {
		return client.Filter{}, err
	}
	fs := []client.Filter{f}
	for p.keyword(kw) {
		f, err := next()
		if err != nil {
			return client.Filter{}, err
		}
		fs = append(fs, f)
	}
	if len(fs) == 1 {
		return fs[0], nil
	}
	return join(fs...), nil
}

func (p *filterParser) unary() (client.Filter, error) {
	if p.depth++; p.depth > maxFilterDepth {
		return client.Filter{}, p.errorf("nested more than %d deep", maxFilterDepth)
	}
	defer func() { p.depth-- }()
	if p.keyword("not") {
		f, err := p.unary()
		if err != nil {
			return client.Filter{}, err
		}
		return client.NotFilter(f), nil
	}
	if p.i < len(p.toks) && !p.toks[p.i].quoted && p.toks[p.i].text == "(" {
		p.i++
		f, err := p.or()
		if err != nil {
			return client.Filter{}, err
		}
		if p.i >= len(p.toks) || p.toks[p.i].quoted || p.toks[p.i].text != ")" {
			return client.Filter{}, p.errorf("expected )")
		}
		p.i++
		return f, nil
	}
	return p.comparison()
}

var filterOps = map[string]client.CompareOp{
	"=": client.Equal, "!=": client.NotEqual, "<": client.Less, "<=": client.LessOrEqual,
	">": client.Greater, ">=": client.GreaterOrEqual,
}

func (p *filterParser) comparison() (client.Filter, error) {
	if p.i >= len(p.toks) || isFilterPunct(p.toks[p.i]) {
		return client.Filter{}, p.errorf("expected a column name")
	}
	name, isKey := p.toks[p.i].text, p.toks[p.i].text == keyPseudoColumn && !p.toks[p.i].quoted
	col := client.Column{Family: p.family, Qualifier: name}
	if fam, qual, ok := strings.Cut(name, ":"); ok {
		col = client.Column{Family: fam, Qualifier: qual}
	}
	if !isKey && (col.Family == "" || col.Qualifier == "") {
		return client.Filter{}, p.errorf("column %q: want family:qualifier or qualifier", name)
	}
	p.i++
	if p.i >= len(p.toks) || p.toks[p.i].quoted {
		return client.Filter{}, p.errorf("expected one of = != < <= > >= ~ after %s", name)
	}
	op := p.toks[p.i].text
	_, isCmp := filterOps[op]
	if !isCmp && op != "~" {
		return client.Filter{}, p.errorf("expected one of = != < <= > >= ~ after %s, got %q", name, op)
	}
	p.i++
	if p.i >= len(p.toks) || isFilterPunct(p.toks[p.i]) {
		return client.Filter{}, p.errorf("expected a value after %s %s", name, op)
	}
	val := p.toks[p.i].text
	p.i++
	if !p.toks[p.i-3].quoted {
		if f, ok, err := cellLeaf(name, op, val); ok {
			return f, err
		}
	}
	if isKey {
		if op != "~" {
			return client.Filter{}, fmt.Errorf("%s %s: row keys take ~ only (scan a key range for ranges)", name, op)
		}
		if err := checkRegex(name, val); err != nil {
			return client.Filter{}, err
		}
		return client.KeyRegexFilter(val), nil
	}
	if op == "~" {
		if err := checkRegex(name, val); err != nil {
			return client.Filter{}, err
		}
		return client.ValueRegexFilter(col, val), nil
	}
	return client.ValueFilter(col, filterOps[op], []byte(val)), nil
}

// checkRegex refuses a ~ whose pattern is not RE2, before the filter is built (a read would refuse
// it too, but later, and without the expression's words).
func checkRegex(name, val string) error {
	if _, err := regexp.Compile(val); err != nil {
		return fmt.Errorf("%s ~ %q: not a valid RE2 regex: %w", name, val, err)
	}
	return nil
}

// isFilterPunct reports whether t is an operator or parenthesis rather than a word or string.
func isFilterPunct(t filterToken) bool {
	if t.quoted {
		return false
	}
	_, isOp := filterOps[t.text]
	return isOp || t.text == "(" || t.text == ")" || t.text == "~"
}
