package gatehouse

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText reports whether s can be stored and compared as text on both
// databases: valid UTF-8 without NUL (PostgreSQL text holds neither).
func CleanText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// CleanValues reports whether every key and value of a form or query is
// clean text of at most max bytes (max 0: no bound).
func CleanValues(v map[string][]string, max int) bool {
	for k, vs := range v {
		if !CleanText(k) {
			return false
		}
		for _, x := range vs {
			if (max > 0 && len(x) > max) || !CleanText(x) {
				return false
			}
		}
	}
	return true
}

// OneLine reports whether s is one line of clean text: no line break
// (including U+2028 and U+2029) and no other control character (Unicode
// Cc: C0, DEL, C1). Names are one line: they reach mail subjects and
// headers, audit logs and pages.
func OneLine(s string) bool {
	return CleanText(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	})
}

// CheckOneLine is the one answer to a name (or subject) of field that is
// not OneLine: 400 "<field> must not contain line breaks or control
// characters".
func CheckOneLine(field, s string) error {
	if OneLine(s) {
		return nil
	}
	return InvalidField(field, "%s must not contain line breaks or control characters", field)
}
