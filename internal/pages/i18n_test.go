package pages_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// speaking is b sending Accept-Language: header with every request.
func speaking(b *testenv.Browser, header string) *testenv.Browser {
	next := b.Client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *b.Client
	c.Transport = acceptLanguage{header, next}
	b.Client = &c
	return b
}

type acceptLanguage struct {
	header string
	next   http.RoundTripper
}

func (a acceptLanguage) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Accept-Language", a.header)
	return a.next.RoundTrip(r)
}

// englishLeaks is i18n.EnglishLeaks of a page's text.
func englishLeaks(body string) []string { return i18n.EnglishLeaks(html.UnescapeString(body)) }

// wantGerman fails unless page is in German: <html lang="de"> and no
// English sentence of the catalogue.
func wantGerman(t *testing.T, what string, res *testenv.Page) {
	t.Helper()
	if res.Status >= 400 {
		t.Fatalf("%s: status %d:\n%.2000s", what, res.Status, res.Body)
	}
	if !strings.Contains(res.Body, `<html lang="de">`) {
		t.Fatalf("%s: not <html lang=\"de\">:\n%.500s", what, res.Body)
	}
	if leaks := englishLeaks(res.Body); len(leaks) > 0 {
		t.Fatalf("%s shows English in German: %q", what, leaks)
	}
}

// TestGermanPages: a browser asking for German (Accept-Language) gets
// every page it opens in German, signed out and in a workspace's console,
// with dates written the German way; English stays the default.
func TestGermanPages(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		out := speaking(env.NewBrowser(t), "de-DE,de;q=0.9,en;q=0.5")
		for _, path := range []string{"/signin", "/signup", "/recover"} {
			wantGerman(t, path, out.Get(t, path))
		}
		wantPage(t, "German sign-in", out.Get(t, "/signin"), 200, "Anmelden", "Passwort vergessen?")
		wantPage(t, "English by default", env.NewBrowser(t).Get(t, "/signin"), 200, `<html lang="en">`, "Forgot your password?")
		wantPage(t, "French falls back to English", speaking(env.NewBrowser(t), "fr-FR").Get(t, "/signin"), 200, `<html lang="en">`)

		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Hafen", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		b := speaking(signedIn(t, env, owner), "de")
		for _, path := range []string{"/", "/account", "/account/sessions", "/account/passkeys", "/account/two-factor", "/account/apps",
			"/account/keys", "/account/workspaces", "/account/activity"} {
			wantGerman(t, path, b.Get(t, path))
		}
		base := "/workspaces/" + org
		for _, path := range []string{"", "/members", "/invitations", "/teams", "/tools", "/keys", "/domains", "/settings", "/audit"} {
			wantGerman(t, base+path, b.Get(t, base+path))
		}
		// A notice after a form, and a date: 28.11.2026 14:05.
		res := b.Post(t, "/account/profile", url.Values{"name": {"Erika"}})
		wantRedirect(t, "profile", res, "/account?done=profile")
		wantPage(t, "notice", b.Get(t, "/account?done=profile"), 200, "Profil gespeichert.")
		sessions := b.Get(t, "/account/sessions")
		if !regexp.MustCompile(`angemeldet am \d{2}\.\d{2}\.\d{4} \d{2}:\d{2}`).MatchString(sessions.Body) {
			t.Fatalf("sessions: no German date:\n%.3000s", sessions.Body)
		}
		// A page naming a count: 2 Mitglieder.
		wantPage(t, "workspace count", b.Get(t, "/account/workspaces"), 200, "2 Mitglieder")
	})
}

// TestLanguagePreference: a person's language on the account page wins
// over the browser's, for pages and for the mail sent to them; a value
// other than "", "en" or "de" is refused; the mail of a sign-up goes out
// in the language of the request that made it.
func TestLanguagePreference(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := speaking(signedIn(t, env, a), "en-US")
		wantPage(t, "English account", b.Get(t, "/account"), 200, `<html lang="en">`, "Automatic (browser)", `<option value="de" lang="de">Deutsch</option>`)
		wantRedirect(t, "prefer German", b.Post(t, "/account/profile", url.Values{"name": {a.Name}, "language": {"de"}}), "/account?done=profile")
		res := b.Get(t, "/account")
		wantGerman(t, "preferred German", res)
		wantPage(t, "German chosen", res, 200, `<option value="de" lang="de" selected>Deutsch</option>`)
		// A sentence a handler formats (tr) follows the preference too.
		wantPage(t, "formatted title", b.Get(t, "/"), 200, "Willkommen, "+a.Name)

		// Mail to the person follows the preference: a security notice.
		wantRedirect(t, "password", b.Post(t, "/account/password", url.Values{"current_password": {a.Password},
			"new_password": {"ein ziemlich langes Passwort"}}), "/account?done=password")
		env.WaitMail(t)
		var subject, text string
		for _, m := range env.Mail.Messages() {
			if strings.EqualFold(m.To[0], a.Email) && strings.Contains(m.Subject, "Sicherheitshinweis") {
				subject, text = m.Subject, m.Text
			}
		}
		if subject == "" {
			t.Fatalf("no German security notice to %s", a.Email)
		}
		if !strings.Contains(text, "Ihr Passwort wurde geändert.") {
			t.Fatalf("notice text %q", text)
		}
		if leaks := englishLeaks(text); len(leaks) > 0 {
			t.Fatalf("the German notice shows English: %q", leaks)
		}

		wantPage(t, "refused language", b.Post(t, "/account/profile", url.Values{"name": {a.Name}, "language": {"fr"}}), 400, `id="language-error"`)
		wantRedirect(t, "automatic", b.Post(t, "/account/profile", url.Values{"name": {a.Name}, "language": {""}}), "/account?done=profile")
		wantPage(t, "browser's language again", b.Get(t, "/account"), 200, `<html lang="en">`)

		// A sign-up from a German browser is confirmed in German.
		email := testenv.Email()
		speaking(env.NewBrowser(t), "de").Post(t, "/signup", url.Values{"email": {email}, "password": {"a long enough passphrase"}, "next": {"/"}})
		env.WaitMail(t)
		texts := env.MailTexts(email, "/verify-email?token=")
		if len(texts) != 1 || !strings.Contains(texts[0], "Jemand hat sich mit dieser Adresse") {
			t.Fatalf("sign-up mail %q", texts)
		}
	})
}

// TestLanguagePreferenceFromAPI: a preference set through PATCH /v1/me is
// the one the pages use (and the account page shows chosen); cleared
// through the API, the pages follow the browser again.
func TestLanguagePreferenceFromAPI(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := speaking(signedIn(t, env, a), "en-US")
		wantPage(t, "English account", b.Get(t, "/account"), 200, `<html lang="en">`)

		env.Do(t, "PATCH", "/v1/me", a.Access, map[string]any{"language": "de"}).Want(t, 200)
		res := b.Get(t, "/account")
		wantGerman(t, "German set through the API", res)
		wantPage(t, "German chosen", res, 200, `<option value="de" lang="de" selected>Deutsch</option>`)

		env.Do(t, "PATCH", "/v1/me", a.Access, map[string]any{"language": ""}).Want(t, 200)
		wantPage(t, "cleared through the API", b.Get(t, "/account"), 200, `<html lang="en">`)
	})
}
