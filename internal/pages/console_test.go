package pages_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// signedIn is a browser signed in to a on the hosted pages.
func signedIn(t *testing.T, env *testenv.Env, a *testenv.Account) *testenv.Browser {
	t.Helper()
	b := env.NewBrowser(t)
	if res := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}); res.Status != http.StatusSeeOther || res.Location() != "/" {
		t.Fatalf("sign-in: %d %q; want 303 to /", res.Status, res.Location())
	}
	return b
}

// wantPage checks an answer's status and that its body holds every text.
func wantPage(t *testing.T, what string, res *testenv.Page, status int, texts ...string) {
	t.Helper()
	if res.Status != status {
		t.Fatalf("%s: %d; want %d\n%.2000s", what, res.Status, status, res.Body)
	}
	for _, s := range texts {
		if !strings.Contains(res.Body, s) {
			t.Fatalf("%s: the page lacks %q\n%.4000s", what, s, res.Body)
		}
	}
}

// wantRedirect checks a 303 to location.
func wantRedirect(t *testing.T, what string, res *testenv.Page, location string) {
	t.Helper()
	if res.Status != http.StatusSeeOther || res.Location() != location {
		t.Fatalf("%s: %d %q; want 303 to %q\n%.2000s", what, res.Status, res.Location(), location, res.Body)
	}
}

// TestConsoleSignedOut: the console asks an anonymous browser to sign in
// and returns to the page afterwards; its forms do nothing for it.
func TestConsoleSignedOut(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		wantPage(t, "GET / signed out", b.Get(t, "/"), 200, `action="/signin"`, `href="/signup"`)
		for _, path := range []string{"/account", "/account/sessions", "/account/apps", "/account/keys", "/account/workspaces", "/account/delete"} {
			wantRedirect(t, "GET "+path, b.Get(t, path), "/signin?next="+url.QueryEscape(path))
		}
		for _, path := range []string{"/account/profile", "/account/keys", "/account/delete", "/account/sessions/revoke-others"} {
			wantRedirect(t, "POST "+path, b.Post(t, path, url.Values{"name": {"x"}}), "/signin")
		}
		// An error page for an anonymous browser leads to sign-in, with no sign-out.
		res := b.Get(t, "/invite?token=not-a-token")
		wantPage(t, "signed out error", res, res.Status, `href="/signin">Go to sign-in`)
		if res.Status < 400 || strings.Contains(res.Body, `action="/signout"`) {
			t.Fatalf("an anonymous error page: %d, or offers sign-out", res.Status)
		}
		// After signing in with that next, the browser is back on the page.
		a := env.Register(t)
		res = b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/account/keys"}})
		wantRedirect(t, "sign-in with next", res, "/account/keys")
		wantPage(t, "GET / signed in", b.Get(t, "/"), 200, "Welcome, Test User", `aria-current="page"`, `action="/signout"`)
		wantRedirect(t, "GET /signin signed in", b.Get(t, "/signin"), "/")
		wantRedirect(t, "GET /signup signed in", b.Get(t, "/signup"), "/")
	})
}

// TestSignUpPage covers /signup: the rules shown, a refused password or
// name next to its field with the typed values kept (never the password),
// the taken address explained with the ways back in, success landing on
// the console signed in, and a cross-site post refused with no account.
func TestSignUpPage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		wantPage(t, "GET /signup", b.Get(t, "/signup"), 200, "At least 8 characters", `autocomplete="new-password"`, `action="/signin/magic"`)
		email := testenv.Email()
		for _, tc := range []struct{ name, password, text string }{
			{"short", "short1", "Password must be at least 8 characters."},
			{"common", "password123", "Password is too common"},
			{"contains the address", strings.Split(email, "@")[0] + "!!", "Password must not contain your email address."},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := b.Post(t, "/signup", url.Values{"email": {email}, "name": {"Ada <Lovelace>"}, "password": {tc.password}})
				wantPage(t, "POST /signup", res, 400, `id="password-error">`+tc.text, `value="`+email+`"`, `value="Ada &lt;Lovelace&gt;"`, `aria-invalid="true"`)
				if strings.Contains(res.Body, tc.password) {
					t.Fatalf("the refused password is on the page")
				}
			})
		}
		env.Login(t, email, "a good passphrase").Want(t, 401) // nothing was created
		res := b.Post(t, "/signup", url.Values{"email": {"not-an-address"}, "password": {"a good passphrase"}})
		wantPage(t, "bad address", res, 400, `id="email-error"`, `value="not-an-address"`)

		forged := env.NewBrowser(t).PostCrossSite(t, "/signup", url.Values{"email": {email}, "password": {"a good passphrase"}})
		wantPage(t, "cross-site sign-up", forged, 403, "Request refused")
		env.Login(t, email, "a good passphrase").Want(t, 401)

		res = b.Post(t, "/signup", url.Values{"email": {email}, "name": {"Ada"}, "password": {"a good passphrase"}})
		wantRedirect(t, "sign-up", res, "/")
		wantPage(t, "console after sign-up", b.Get(t, "/"), 200, "Welcome, Ada", "is not confirmed yet")

		other := env.NewBrowser(t)
		taken := other.Post(t, "/signup", url.Values{"email": {strings.ToUpper(email)}, "password": {"another passphrase"}})
		wantPage(t, "taken address", taken, 409, "An account with this email address already exists.", `href="/signin"`, `href="/recover"`)
		// The pages the error links to take the address along (in a sealed
		// show-once cookie, not their URLs), once, and only in that browser.
		typed := `value="` + strings.ToUpper(email) + `"`
		wantPage(t, "sign-in after the taken address", other.Get(t, "/signin"), 200, typed)
		wantPage(t, "recovery after the taken address", other.Get(t, "/recover"), 200, typed)
		for what, res := range map[string]*testenv.Page{"sign-in again": other.Get(t, "/signin"), "recovery again": other.Get(t, "/recover"),
			"sign-in in another browser": env.NewBrowser(t).Get(t, "/signin")} {
			if res.Status != 200 || strings.Contains(strings.ToLower(res.Body), email) {
				t.Errorf("%s: %d, the address is on the page: %v", what, res.Status, strings.Contains(strings.ToLower(res.Body), email))
			}
		}
		for _, c := range taken.Header.Values("Set-Cookie") {
			if strings.Contains(strings.ToLower(c), strings.Split(email, "@")[0]) {
				t.Errorf("cookie %q holds the address readable", c)
			}
		}
	})
}

// TestConsoleProfile: the profile form saves and redirects; a refused
// value is shown next to its field, typed value kept, nothing saved; a
// cross-site post is refused and changes nothing.
func TestConsoleProfile(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		wantPage(t, "GET /account", b.Get(t, "/account"), 200, a.Email, "Not confirmed", `value="Test User"`, "Change password")

		res := b.Post(t, "/account/profile", url.Values{"name": {"Grace Hopper"}, "avatar_url": {"https://img.example/g.png"}})
		wantRedirect(t, "save", res, "/account?done=profile")
		wantPage(t, "saved", b.Get(t, res.Location()), 200, "Profile saved.", `value="Grace Hopper"`, `value="https://img.example/g.png"`)

		res = b.Post(t, "/account/profile", url.Values{"name": {"Kept Name"}, "avatar_url": {"javascript:alert(1)"}})
		wantPage(t, "bad avatar", res, 400, `id="avatar_url-error">Avatar URL must be an absolute http(s) URL.`, `value="Kept Name"`)
		res = b.Post(t, "/account/profile", url.Values{"name": {"   "}, "avatar_url": {""}})
		wantPage(t, "empty name", res, 400, `id="name-error">Name must not be empty.`)
		if me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200); me.Get("user.name") != "Grace Hopper" {
			t.Fatalf("a refused form saved something: name %v", me.Get("user.name"))
		}

		forged := b.PostCrossSite(t, "/account/profile", url.Values{"name": {"Mallory"}})
		wantPage(t, "cross-site profile", forged, 403, "Request refused")
		if me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200); me.Get("user.name") != "Grace Hopper" {
			t.Fatalf("a cross-site post changed the name to %v", me.Get("user.name"))
		}

		res = b.Post(t, "/account/verify-email", url.Values{})
		wantRedirect(t, "resend", res, "/account?done=throttled") // the sign-up mail went out seconds ago
	})
}

// TestConsolePassword: a wrong current password is shown next to its
// field and changes nothing; a good change signs the other sessions out
// and keeps this browser's.
func TestConsolePassword(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b, other := signedIn(t, env, a), signedIn(t, env, a)
		res := b.Post(t, "/account/password", url.Values{"current_password": {"wrong one!"}, "new_password": {"a new passphrase"}})
		wantPage(t, "wrong current", res, 403, `id="current_password-error">Current password is wrong.`)
		if strings.Contains(res.Body, "a new passphrase") || strings.Contains(res.Body, "wrong one!") {
			t.Fatalf("a password is on the page")
		}
		res = b.Post(t, "/account/password", url.Values{"current_password": {a.Password}, "new_password": {"qwerty123"}})
		wantPage(t, "common new password", res, 400, `id="new_password-error">New password is too common`)
		env.Login(t, a.Email, a.Password).Want(t, 200)

		wantRedirect(t, "change", b.Post(t, "/account/password", url.Values{"current_password": {a.Password}, "new_password": {"a new passphrase"}}), "/account?done=password")
		wantPage(t, "this browser stays", b.Get(t, "/account"), 200, a.Email)
		wantRedirect(t, "the other browser is out", other.Get(t, "/account"), "/signin?next=%2Faccount")
		env.Login(t, a.Email, "a new passphrase").Want(t, 200)
	})
}

var sessionIDs = regexp.MustCompile(`name="id" value="([0-9a-f-]{36})"`)

// TestConsoleSessions: the sessions page marks this browser's; revoking
// another signs that browser out; "every other session" leaves only this
// one; another user's session id is not found and stays live.
func TestConsoleSessions(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b, other, third := signedIn(t, env, a), signedIn(t, env, a), signedIn(t, env, a)
		res := b.Get(t, "/account/sessions")
		wantPage(t, "sessions", res, 200, "This browser", "Sign out every other session")
		if n := strings.Count(res.Body, "This browser</span>"); n != 1 {
			t.Fatalf("%d sessions marked as this browser; want 1", n)
		}
		// The other browser's session is the one its own page marks.
		otherID := markedSession(t, other.Get(t, "/account/sessions").Body)
		wantRedirect(t, "revoke one", b.Post(t, "/account/sessions/revoke", url.Values{"confirm": {"yes"}, "id": {otherID}}), "/account/sessions?done=revoked")
		wantRedirect(t, "revoked browser", other.Get(t, "/account/sessions"), "/signin?next=%2Faccount%2Fsessions")
		wantPage(t, "third still in", third.Get(t, "/account"), 200)

		stranger := env.Register(t)
		sb := signedIn(t, env, stranger)
		strangerID := markedSession(t, sb.Get(t, "/account/sessions").Body)
		wantPage(t, "foreign session", b.Post(t, "/account/sessions/revoke", url.Values{"confirm": {"yes"}, "id": {strangerID}}), 404, "Session not found.")
		wantPage(t, "stranger still in", sb.Get(t, "/account"), 200)

		wantRedirect(t, "revoke others", b.Post(t, "/account/sessions/revoke-others", url.Values{}), "/account/sessions?done=others")
		wantRedirect(t, "third out", third.Get(t, "/account"), "/signin?next=%2Faccount")
		res = b.Get(t, "/account/sessions?done=others")
		wantPage(t, "only this one", res, 200, "Every other session was signed out.")
		if strings.Contains(res.Body, "Sign out every other session") {
			t.Fatalf("the revoke-others button is shown with no other session")
		}
	})
}

// markedSession is the id of the session a sessions page marks as this browser's.
func markedSession(t *testing.T, body string) string {
	t.Helper()
	for _, item := range strings.Split(body, "<li class=\"row\">") {
		if strings.Contains(item, "This browser</span>") {
			if m := sessionIDs.FindStringSubmatch(item); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no session marked as this browser:\n%s", body)
	return ""
}

// TestDeviceName: user agents as the sessions page names them.
func TestDeviceName(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0":     "Edge on Windows",
		"Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36":                  "Chrome on Android",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/604.1": "Safari on iPhone",
		"Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0":                                                    "Firefox on Linux",
		"Go-http-client/1.1": "Go-http-client/1.1",
		"":                   "Unknown device",
	} {
		if got := pages.DeviceName(ua); got != want {
			t.Errorf("DeviceName(%q) = %q; want %q", ua, got, want)
		}
	}
}

// TestConsoleEdges: signing out this browser from the sessions page ends
// it; a key for a workspace the user is not in is refused with the
// service's 403 and none is made; the sign-up form shares the API's
// per-IP registration limit.
func TestConsoleEdges(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		own := markedSession(t, b.Get(t, "/account/sessions").Body)
		wantRedirect(t, "sign out this browser", b.Post(t, "/account/sessions/revoke", url.Values{"confirm": {"yes"}, "id": {own}}), "/signin")
		wantRedirect(t, "signed out", b.Get(t, "/account"), "/signin?next=%2Faccount")

		b = signedIn(t, env, a)
		foreign := env.TeamOrg(t, "Not Mine")
		res := b.Post(t, "/account/keys", url.Values{"name": {"sneaky"}, "org_id": {foreign}, "expires_in_days": {"30"}})
		wantPage(t, "foreign workspace key", res, 403, `class="error" role="alert">You are not a member`, `value="sneaky"`)
		if strings.Contains(b.Get(t, "/account/keys").Body, "sneaky") {
			t.Fatalf("a key was made for a foreign workspace")
		}

		anon := env.NewBrowser(t)
		var last *testenv.Page
		for range 21 {
			last = anon.Post(t, "/signup", url.Values{"email": {testenv.Email()}, "password": {"short"}})
		}
		wantPage(t, "21st sign-up in a minute", last, 429, "Too many accounts created from here")
	})
}

// TestSignInAgain: signing in again in the same browser ends the
// browser's previous session instead of leaving it live beside the new one.
func TestSignInAgain(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := signedIn(t, env, a)
		rows := func() int { return strings.Count(b.Get(t, "/account/sessions").Body, `<li class="row">`) }
		before, first := rows(), markedSession(t, b.Get(t, "/account/sessions").Body)
		if res := b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}); res.Status != http.StatusSeeOther {
			t.Fatalf("second sign-in: %d", res.Status)
		}
		if after, second := rows(), markedSession(t, b.Get(t, "/account/sessions").Body); after != before || second == first {
			t.Fatalf("sessions %d → %d, this browser's %s → %s; want the count kept and a new session", before, after, first, second)
		}
	})
}

// TestConsentAnotherAccount: the consent page offers "Use another account",
// which signs this browser out and returns to the same consent request
// after signing in; it links to the connected-apps page.
func TestConsentAnotherAccount(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		client := env.Do(t, "POST", "/oauth/register", "", map[string]any{"client_name": "Pager", "redirect_uris": []string{"http://127.0.0.1:9/cb"}}).
			Want(t, http.StatusCreated).Str("client_id")
		authorize := "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"http://127.0.0.1:9/cb"},
			"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "state": {"s"}}.Encode()
		a := env.Register(t)
		b := signedIn(t, env, a)
		page := b.Get(t, authorize)
		wantPage(t, "consent", page, 200, "Use another account", `href="/account/apps"`)
		next := regexp.MustCompile(`<form method="post" action="/signout" class="aside">\s*<input type="hidden" name="next" value="([^"]+)">`).FindStringSubmatch(page.Body)
		if next == nil {
			t.Fatalf("no sign-out form with next:\n%s", page.Body)
		}
		value := strings.ReplaceAll(next[1], "&amp;", "&")
		res := b.Post(t, "/signout", url.Values{"next": {value}})
		loc, _ := url.Parse(res.Location())
		if res.Status != http.StatusSeeOther || loc.Path != "/signin" {
			t.Fatalf("sign-out: %d %q", res.Status, res.Location())
		}
		back, _ := url.Parse(loc.Query().Get("next"))
		if back.Path != "/oauth/authorize" || back.Query().Get("client_id") != client || back.Query().Get("state") != "s" {
			t.Fatalf("after another sign-in the browser would go to %q; want the same authorize request", loc.Query().Get("next"))
		}
		wantRedirect(t, "signed out", b.Get(t, "/account"), "/signin?next=%2Faccount")
		// A next that leaves the site is not followed.
		res = signedIn(t, env, a).Post(t, "/signout", url.Values{"next": {"//evil.example"}})
		wantRedirect(t, "evil next", res, "/signin?next=%2F")
	})
}

// TestConsoleHomeRepairsWorkspaces: the console lists the workspaces with
// the user its session already read (no second read of the user), and
// still repairs as GET /v1/me/orgs does: a deleted default falls back to
// the personal workspace, and a missing personal workspace is made again.
func TestConsoleHomeRepairsWorkspaces(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.Register(t), env.Register(t)
		team := env.TeamOrg(t, "Doomed Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
		env.Do(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
		br := env.NewBrowser(t)
		wantRedirect(t, "sign-in", br.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}}), "/")
		wantPage(t, "home, team default", br.Get(t, "/"), 200, "Doomed Team</a> <span class=\"muted\">member · default")

		env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, team, env.Clock.Now().UnixMicro())
		res := br.Get(t, "/")
		wantPage(t, "home, team deleted", res, 200, "owner · personal · default")
		if strings.Contains(res.Body, "Doomed Team") {
			t.Fatalf("the deleted workspace is still listed")
		}

		env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, a.OrgID, env.Clock.Now().UnixMicro())
		wantPage(t, "workspaces, personal made again", br.Get(t, "/account/workspaces"), 200, `<span class="badge ok">Default</span>`, "personal · owner")
		var live int
		if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM orgs WHERE owner_id = $1 AND kind = 'personal' AND deleted_at IS NULL`, a.UserID).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live != 1 {
			t.Fatalf("%d live personal workspaces; want the one made again", live)
		}
	})
}
