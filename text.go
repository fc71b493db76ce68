package gatehouse

import (
	"strings"
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
