package pages

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/internal/i18n"

	"golang.org/x/text/language"
)

// errorText is s, a sentence a page shows, in lang: a sentence of the
// pages' catalogue, or the message of a domain error as the pages show it
// (sentence: capitalised, a full stop; a field's API name replaced by its
// label), translated by its English text or by the format it was made
// from (i18n.Refusal). It is the one place the refusals of the identity,
// workspace, SSO and tool services become German; the JSON API keeps
// their English. A sentence the catalogue lacks stays as it is.
func errorText(lang language.Tag, s string) string {
	if lang == i18n.English || s == "" {
		return s
	}
	if i18n.Has(lang, s) {
		return i18n.T(lang, s)
	}
	core, stop := strings.CutSuffix(s, ".")
	for _, c := range []string{lowerFirst(core), core} {
		out, ok := i18n.Refusal(lang, c)
		if !ok {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(s); unicode.IsUpper(r) {
			out = upperFirst(out)
		}
		if stop && !strings.HasSuffix(out, ".") {
			out += "."
		}
		return out
	}
	return s
}

// lowerFirst is s with its first letter in lower case.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// upperFirst is s with its first letter in upper case.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
