package i18n

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRefusal: a formatted message is found by its format, numbers and
// quoted values kept, a field's name translated as a term; a message the
// catalogue lacks is not.
func TestRefusal(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"name must be at most 200 characters", "Der Name darf höchstens 200 Zeichen lang sein"},
		{"new password must be at least 8 characters", "neues Passwort muss mindestens 8 Zeichen lang sein"},
		{`domain "a b" is not a valid domain name`, `Die Domain "a b" ist kein gültiger Domainname`},
		{"an account holds at most 10000 passkeys", "Ein Konto kann höchstens 10.000 Passkeys haben"},
		{"your role (member) lacks the members:write permission", "Ihrer Rolle (member) fehlt die Berechtigung members:write"},
		{"passkey not found", "Passkey nicht gefunden"},
	} {
		got, ok := Refusal(German, c.in)
		if !ok || got != c.want {
			t.Errorf("Refusal(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	if got, ok := Refusal(German, "something nobody wrote"); ok {
		t.Errorf("an unknown message translated: %q", got)
	}
	if got, _ := Refusal(English, "name is required"); got != "name is required" {
		t.Errorf("English changed: %q", got)
	}
}

// verbs are the kinds of a format's verbs, sorted (German may reorder
// them with %[n]).
var anyVerb = regexp.MustCompile(`%(\[\d+\])?[sdvq]`)

func verbs(format string) []string {
	var out []string
	for _, v := range anyVerb.FindAllString(format, -1) {
		out = append(out, v[len(v)-1:])
	}
	slices.Sort(out)
	return out
}

// TestGermanKeepsTheValues: each German format has the verbs of its
// English key, so no value is lost or shows as %!; and no key has two
// different translations in the catalogue's parts.
func TestGermanKeepsTheValues(t *testing.T) {
	parts := map[string]map[string]string{"german": german, "germanMail": germanMail, "germanAudit": germanAudit, "germanErrors": germanErrors, "germanWords": germanWords, "germanTools": germanTools}
	seen := map[string]string{}
	for name, m := range parts {
		for k, de := range m {
			if !slices.Equal(verbs(k), verbs(de)) && !strings.Contains(de, "%[") {
				t.Errorf("%s: %q has verbs %v, its German %q has %v", name, k, verbs(k), de, verbs(de))
			}
			if other, ok := seen[k]; ok && other != de {
				t.Errorf("%s: %q translated twice: %q and %q", name, k, other, de)
			}
			seen[k] = de
		}
	}
}

// TestPluralAndTerm: counts take the language's plural form with its
// numbers; roles and tools are named in the language.
func TestPluralAndTerm(t *testing.T) {
	for _, c := range []struct {
		lang      string
		n         int
		want      string
		wantCodes string
	}{
		{"de", 1, "1 Mitglied", "Sie haben noch 1 unbenutzten Wiederherstellungscode."},
		{"de", 10001, "10.001 Mitglieder", "Sie haben noch 10.001 unbenutzte Wiederherstellungscodes."},
		{"en", 0, "0 members", "0 unused recovery codes are left."},
		{"en", 1, "1 member", "1 unused recovery code is left."},
	} {
		lang, _ := Parse(c.lang)
		if got := Plural(lang, c.n, "1 member", "%d members"); got != c.want {
			t.Errorf("Plural(%s, %d) = %q; want %q", c.lang, c.n, got, c.want)
		}
		if got := Plural(lang, c.n, "1 unused recovery code is left.", "%d unused recovery codes are left."); got != c.wantCodes {
			t.Errorf("Plural(%s, %d) = %q; want %q", c.lang, c.n, got, c.wantCodes)
		}
	}
	for word, want := range map[string]string{"owner": "Inhaber", "member": "Mitglied", "billing": "Abrechnung", "tasks": "Aufgaben", "someone@example.com": "someone@example.com"} {
		if got := Term(German, word); got != want {
			t.Errorf("Term(de, %q) = %q; want %q", word, got, want)
		}
	}
	if got := Term(English, "owner"); got != "owner" {
		t.Errorf("Term(en, owner) = %q", got)
	}
}
