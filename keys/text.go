package keys

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format returns the printed form of a key of this schema, the one the brine CLI prints and takes
// back and that client.KeyRegexFilter matches on a table with a key schema: the fields' values
// separated by commas, Int64 and Uint64 in decimal, the others as their text (Bytes and Raw: their
// bytes as they are). A value holding a comma, a double quote, a CR or LF, starting with a space, or
// the only value and empty, is double-quoted with its quotes doubled, as in CSV. It fails with
// ErrMalformedKey on a key Decode refuses. ParseText and Parse are its inverse.
func (s *Schema) Format(key []byte) (string, error) {
	texts, err := s.Texts(key)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, text := range texts {
		if i > 0 {
			b.WriteByte(',')
		}
		if !needsQuotes(text, len(texts)) {
			b.WriteString(text)
			continue
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(text, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String(), nil
}

// Texts returns the values of a key's fields as text, as ParseValues takes them back: Int64 and
// Uint64 in decimal, the others as they are. It fails with ErrMalformedKey on a key Decode refuses.
func (s *Schema) Texts(key []byte) ([]string, error) {
	vals, err := s.Decode(key)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			texts[i] = x
		case []byte:
			texts[i] = string(x)
		case int64:
			texts[i] = strconv.FormatInt(x, 10)
		case uint64:
			texts[i] = strconv.FormatUint(x, 10)
		}
	}
	return texts, nil
}

// needsQuotes is encoding/csv's rule, so that a CSV reader reads Format's values back (but for a CR
// LF inside one, which it reads as LF), plus the lone empty value, which CSV prints as an empty line.
func needsQuotes(text string, values int) bool {
	if text == "" {
		return values == 1
	}
	if strings.ContainsAny(text, ",\"\r\n") || text == `\.` {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text)
	return unicode.IsSpace(r)
}

// ParseText returns the values of the leading fields written as Format prints them: comma-separated,
// a value in double quotes when it holds a comma or a quote (a quote inside written twice). Fewer
// values than fields name a prefix (see PrefixRange); an empty text is an error, not zero values.
func (s *Schema) ParseText(text string) ([]any, error) {
	if text == "" {
		return nil, fmt.Errorf("%w: no values (an empty value is written \"\")", ErrInvalidValue)
	}
	var fields []string
	for rest := text; ; rest = rest[1:] { // rest[0] is the comma after the last value
		field, after, err := cutValue(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: value %d: %w", ErrInvalidValue, len(fields), err)
		}
		fields = append(fields, field)
		if rest = after; rest == "" {
			break
		}
	}
	return s.ParseValues(fields...)
}

// Parse returns the key whose printed form (Format) is text: one value per field.
func (s *Schema) Parse(text string) ([]byte, error) {
	vals, err := s.ParseText(text)
	if err != nil {
		return nil, err
	}
	if len(vals) != len(s.fields) {
		return nil, fmt.Errorf("%w: %d value(s), the schema %q has %d fields", ErrInvalidValue, len(vals), s, len(s.fields))
	}
	return s.Encode(vals...)
}

// cutValue splits the first value off text; rest is "" or starts with the comma that ends it.
func cutValue(text string) (value, rest string, err error) {
	if !strings.HasPrefix(text, `"`) {
		end := strings.IndexByte(text, ',')
		if end < 0 {
			end = len(text)
		}
		if strings.Contains(text[:end], `"`) {
			return "", "", fmt.Errorf("a double quote in a value not quoted (write %s)", `"`+strings.ReplaceAll(text[:end], `"`, `""`)+`"`)
		}
		return text[:end], text[end:], nil
	}
	var b strings.Builder
	for i := 1; ; {
		j := strings.IndexByte(text[i:], '"')
		if j < 0 {
			return "", "", errors.New("no closing double quote")
		}
		b.WriteString(text[i : i+j])
		i += j + 1
		if !strings.HasPrefix(text[i:], `"`) { // not a doubled quote: the closing one
			if i < len(text) && text[i] != ',' {
				return "", "", fmt.Errorf("%q after the closing double quote", text[i])
			}
			return b.String(), text[i:], nil
		}
		b.WriteByte('"')
		i++
	}
}
