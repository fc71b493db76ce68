package i18n

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// A domain error's message reaches a page already formatted ("name must
// be at most 200 characters"), so Refusal finds the format it was made
// from among germanErrors' keys, takes its values back out, and formats
// the German with them.

// germanTerms translate the words an error's values may be: the names the
// pages give the API's fields (pages.fieldLabels), roles and tools. Only a
// value that is a whole term is translated; names, addresses and domains
// pass as they are.
var germanTerms = map[string]string{
	"name": "Name", "email": "E-Mail-Adresse", "at least one email address": "mindestens eine E-Mail-Adresse",
	"password": "Passwort", "avatar URL": "Avatar-URL", "new password": "neues Passwort", "the new password": "das neue Passwort",
	"new_password": "neues Passwort", "current password": "aktuelles Passwort", "expiry": "Ablauf", "tools": "Werkzeuge",
	"slug": "Slug", "confirmation": "Bestätigung", "role": "Rolle", "domain": "Domain", "mode": "Modus",
	"redirect URIs": "Weiterleitungs-URIs", "post-logout redirect URIs": "Weiterleitungs-URIs nach dem Abmelden",
	"authentication": "Authentifizierung", "JWKS URL": "JWKS-URL", "back-channel logout URL": "Back-Channel-Logout-URL",
	"grace": "Übergangszeit", "issuer": "Aussteller", "client ID": "Client-ID", "client secret": "Client-Geheimnis",
	"scopes": "Scopes", "default role": "Standardrolle", "domains": "Domains", "metadata URL": "Metadaten-URL",
	"metadata XML": "Metadaten-XML", "name claim": "Namens-Claim", "groups claim": "Gruppen-Claim", "group": "Gruppe",
	// "which still has other members"
	"has": "hat", "have": "haben",
	// Roles (admin, member and lead are in german) and tools.
	"owner": "Inhaber", "billing": "Abrechnung", "team": "Team",
	"tasks": "Aufgaben", "notes": "Notizen", "sign": "Signieren", "links": "Links", "forms": "Formulare",
	"croncrunch": "Croncrunch", "crm": "CRM",
}

// refusalFormat is a key of germanErrors with values, as a pattern that
// matches the messages it formats.
type refusalFormat struct {
	key   string
	re    *regexp.Regexp
	verbs []byte // the verbs' letters, in order: s, v, d or q
}

// refusalFormats are germanErrors' keys with a verb and words around it,
// the most specific (most literal text) first, so that "name must be at
// most %d characters" wins over "%s must be at most %d bytes".
var refusalFormats = compileRefusals(germanErrors)

// refusalVerb is a verb of a domain error's format.
var refusalVerb = regexp.MustCompile(`%[sdvq]`)

func compileRefusals(m map[string]string) []refusalFormat {
	var out []refusalFormat
	literal := map[string]int{}
	for key := range m {
		parts := refusalVerb.Split(key, -1)
		if len(parts) == 1 || strings.IndexFunc(strings.Join(parts, ""), unicode.IsLetter) < 0 {
			continue // no value, or nothing but values ("%v")
		}
		var re strings.Builder
		re.WriteString("^")
		var verbs []byte
		for i, v := range refusalVerb.FindAllString(key, -1) {
			re.WriteString(regexp.QuoteMeta(parts[i]))
			switch v[1] {
			case 'd':
				re.WriteString(`(-?[0-9]+)`)
			case 'q':
				re.WriteString(`("(?:[^"\\]|\\.)*")`)
			default:
				re.WriteString(`(.+?)`)
			}
			verbs = append(verbs, v[1])
		}
		re.WriteString(regexp.QuoteMeta(parts[len(parts)-1]))
		re.WriteString("$")
		out = append(out, refusalFormat{key, regexp.MustCompile(re.String()), verbs})
		literal[key] = len(strings.Join(parts, ""))
	}
	sort.Slice(out, func(i, j int) bool {
		if literal[out[i].key] != literal[out[j].key] {
			return literal[out[i].key] > literal[out[j].key]
		}
		return out[i].key < out[j].key
	})
	return out
}

// Refusal is msg, the message of a domain error as the code made it
// (English), in lang; ok is false when the catalogue has neither msg nor
// a format of it. A value that is a term (a field's name, a role) is
// translated too.
func Refusal(lang language.Tag, msg string) (string, bool) {
	if lang == English {
		return msg, true
	}
	if s, ok := catalogues[lang][msg]; ok {
		return s, true
	}
	if lang != German {
		return msg, false
	}
	for _, f := range refusalFormats {
		m := f.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		args := make([]any, len(f.verbs))
		for i, v := range f.verbs {
			s := m[i+1]
			switch v {
			case 'd':
				n, err := strconv.Atoi(s)
				if err != nil {
					args[i] = s
					continue
				}
				args[i] = n
			case 'q':
				if u, err := strconv.Unquote(s); err == nil {
					s = u
				}
				args[i] = s
			default:
				if t, ok := germanTerms[s]; ok {
					s = t
				}
				args[i] = s
			}
		}
		return Tf(lang, f.key, args...), true
	}
	return msg, false
}

// Term is word (a role, a tool, a field's name) in lang: the catalogue's
// translation, else germanTerms', else word itself.
func Term(lang language.Tag, word string) string {
	if s, ok := catalogues[lang][word]; ok {
		return s
	}
	if lang == German {
		if s, ok := germanTerms[word]; ok {
			return s
		}
	}
	return word
}

// Plural is one or other (a fmt format of n), by the plural rule of lang
// for n ("1 member", "%d members"; German has the same two forms, other
// languages more), in lang.
func Plural(lang language.Tag, n int, one, other string) string {
	if plural.Cardinal.MatchPlural(lang, n, 0, 0, 0, 0) == plural.One {
		if strings.Contains(one, "%d") {
			return Tf(lang, one, n)
		}
		return T(lang, one)
	}
	return Tf(lang, other, n)
}
