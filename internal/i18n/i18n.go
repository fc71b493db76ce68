// Package i18n is the message catalogue of the pages and the mail
// (issue 30 item 10): every sentence a person reads there is looked up
// here by its English text, which is also what English shows. German is
// the second language. The language comes from the person's preference,
// else the request's Accept-Language, else English. The JSON API's
// messages are not translated: they are its contract.
package i18n

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// The languages served, English first: it is the fallback.
var (
	English = language.English
	German  = language.German
)

// supported are the languages Match chooses among, in the order of their
// codes (Codes).
var supported = []language.Tag{English, German}

var matcher = language.NewMatcher(supported)

// catalogues are the translations by language, keyed by the English text.
var catalogues = map[language.Tag]map[string]string{German: merged(german, germanMail, germanAudit, germanErrors, germanWords, germanTools)}

// merged is the union of the maps ms.
func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// cat is catalogues as golang.org/x/text's catalogue, which formats
// arguments (numbers) for the language.
var cat = build()

func build() catalog.Catalog {
	b := catalog.NewBuilder(catalog.Fallback(English))
	for tag, m := range catalogues {
		for k, v := range m {
			if err := b.SetString(tag, k, v); err != nil {
				panic("i18n: " + k + ": " + err.Error())
			}
		}
	}
	return b
}

// printers format translated messages with arguments, numbers written
// for the language (10.001); a Printer is safe for concurrent use.
var printers = map[language.Tag]*message.Printer{
	German: message.NewPrinter(German, message.Catalog(cat)),
}

// Match is the served language that best fits an Accept-Language header
// (English for none or none served).
func Match(acceptLanguage string) language.Tag {
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return English
	}
	_, i, conf := matcher.Match(tags...)
	if conf == language.No {
		return English
	}
	return supported[i]
}

// Codes are the preference values a person may choose besides "" (the
// browser's language).
func Codes() []string {
	out := make([]string, len(supported))
	for i, t := range supported {
		out[i] = t.String()
	}
	return out
}

// Known reports whether code is a preference value: "" or one of Codes.
func Known(code string) bool {
	_, ok := Parse(code)
	return ok || code == ""
}

// Parse is the served language of a preference code.
func Parse(code string) (language.Tag, bool) {
	for _, t := range supported {
		if code != "" && t.String() == code {
			return t, true
		}
	}
	return English, false
}

// T is key (an English sentence) in lang, the English itself when the
// catalogue has no translation.
func T(lang language.Tag, key string) string {
	if s, ok := catalogues[lang][key]; ok {
		return s
	}
	return key
}

// Tf is T of a fmt format, formatted with args; numbers are written for
// lang (10.001 in German), except in English, which keeps fmt's (10001)
// as the pages had them before the catalogue.
func Tf(lang language.Tag, format string, args ...any) string {
	p := printers[lang]
	if p == nil {
		return fmt.Sprintf(format, args...)
	}
	return p.Sprintf(format, args...)
}

// Has reports whether the catalogue of lang translates key (tests).
func Has(lang language.Tag, key string) bool {
	_, ok := catalogues[lang][key]
	return ok
}

// Keys are the English texts the catalogue of lang translates (tests).
func Keys(lang language.Tag) []string {
	out := make([]string, 0, len(catalogues[lang]))
	for k := range catalogues[lang] {
		out = append(out, k)
	}
	return out
}

// formatVerb is a fmt verb of a catalogue key.
var formatVerb = regexp.MustCompile(`%(\[\d+\])?[sdv]`)

// EnglishLeaks are the catalogue's English sentences (of two words or
// more, unlike their German) that text shows: what a German page or mail
// must not (tests).
func EnglishLeaks(text string) []string {
	var out []string
	for k, de := range catalogues[German] {
		if de == k {
			continue
		}
		for _, part := range formatVerb.Split(k, -1) {
			if part = strings.TrimSpace(part); len(strings.Fields(part)) >= 2 && strings.Contains(text, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// Date is t's day as lang writes it: "28 Nov 2026", "28.11.2026".
func Date(lang language.Tag, t time.Time) string {
	if lang == German {
		return t.Format("02.01.2006")
	}
	return t.Format("2 Jan 2006")
}

// DateTime is t's day and minute with its zone: "28 Nov 2026 14:05 UTC",
// "28.11.2026 14:05 UTC".
func DateTime(lang language.Tag, t time.Time) string {
	if lang == German {
		return t.Format("02.01.2006 15:04 MST")
	}
	return t.Format("2 Jan 2006 15:04 MST")
}

// DateTimeSeconds is DateTime with the seconds (the audit log).
func DateTimeSeconds(lang language.Tag, t time.Time) string {
	if lang == German {
		return t.Format("02.01.2006 15:04:05 MST")
	}
	return t.Format("2 Jan 2006 15:04:05 MST")
}

// ctxKey carries a request's language in its context.
type ctxKey struct{}

// choice is a request's language: the header's, until the person's
// preference is known (Prefer). The header is matched when the language
// is first asked for, so a request that never needs it (most API
// requests) does not pay for parsing it.
type choice struct {
	once   sync.Once
	header string
	tag    language.Tag
}

// get is the choice's language, the header matched on first use.
func (c *choice) get() language.Tag {
	c.once.Do(func() { c.tag = Match(c.header) })
	return c.tag
}

// WithRequest is ctx carrying the language of a request's Accept-Language,
// which Prefer may later replace with the person's preference.
func WithRequest(ctx context.Context, acceptLanguage string) context.Context {
	return context.WithValue(ctx, ctxKey{}, &choice{header: acceptLanguage})
}

// Prefer makes the person's preference code (when set) the language of
// ctx's request, once the request knows who it is.
func Prefer(ctx context.Context, code string) {
	if c, ok := ctx.Value(ctxKey{}).(*choice); ok {
		if t, ok := Parse(code); ok {
			c.get()
			c.tag = t
		}
	}
}

// From is the language of ctx's request, English when none was set.
func From(ctx context.Context) language.Tag {
	if c, ok := ctx.Value(ctxKey{}).(*choice); ok {
		return c.get()
	}
	return English
}

// For is the language of mail to a person whose preference is code: the
// preference, else the language of the request that caused the mail
// (ctx), else English.
func For(ctx context.Context, code string) language.Tag {
	if t, ok := Parse(code); ok {
		return t
	}
	return From(ctx)
}
