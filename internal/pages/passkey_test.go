package pages_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// postJSON sends body as the passkey script does (a same-origin fetch,
// unless site says otherwise) and decodes the JSON answer.
func postJSON(t *testing.T, b *testenv.Browser, env *testenv.Env, path, site string, body any) (int, map[string]any) {
	t.Helper()
	raw, ok := body.(string)
	if !ok {
		data, _ := json.Marshal(body)
		raw = string(data)
	}
	req, _ := http.NewRequest("POST", env.URL+path, bytes.NewReader([]byte(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", site)
	res, err := b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestPasskeyPages: the passkeys page and the script's endpoints, without
// a browser: a signed-in browser adds, lists and removes a passkey and
// signs in with it (the session cookie set, next kept same-site); signed
// out, cross-site or malformed requests are refused with an {error},
// never a 500.
func TestPasskeyPages(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		anon := env.NewBrowser(t)
		if p := anon.Get(t, "/account/passkeys"); p.Status != http.StatusSeeOther || !strings.HasPrefix(p.Location(), "/signin?") {
			t.Fatalf("signed out GET /account/passkeys: %d to %q; want 303 to sign in", p.Status, p.Location())
		}
		if st, out := postJSON(t, anon, env, "/account/passkeys/begin", "same-origin", nil); st != 401 || out["error"] == nil {
			t.Fatalf("signed out begin: %d %v; want 401 with an error", st, out)
		}
		if st, out := postJSON(t, anon, env, "/signin/passkey", "same-origin", `{"ceremony_id":`); st != 400 || out["error"] == nil {
			t.Fatalf("malformed finish: %d %v; want 400 with an error", st, out)
		}
		if st, _ := postJSON(t, anon, env, "/signin/passkey", "cross-site", map[string]any{}); st != 403 {
			t.Fatalf("cross-site finish: %d; want 403", st)
		}

		b := env.NewBrowser(t)
		b.Post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}})
		if st, _ := postJSON(t, b, env, "/account/passkeys/begin", "cross-site", nil); st != 403 {
			t.Fatalf("cross-site begin: %d; want 403", st)
		}
		st, begun := postJSON(t, b, env, "/account/passkeys/begin", "same-origin", nil)
		raw, _ := json.Marshal(begun)
		var o passkeytest.Options
		json.Unmarshal(raw, &o)
		auth := passkeytest.New("http://web.test", "web.test")
		c, att, err := auth.Create(&o)
		if st != 200 || err != nil {
			t.Fatalf("begin: %d %v (%v)", st, begun, err)
		}
		if st, out := postJSON(t, b, env, "/account/passkeys/finish", "same-origin",
			map[string]any{"ceremony_id": o.CeremonyID, "credential": att, "name": "Desk key"}); st != 201 {
			t.Fatalf("finish: %d %v; want 201", st, out)
		}
		page := b.Get(t, "/account/passkeys")
		if page.Status != 200 || !strings.Contains(page.Body, "Desk key") || !strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("passkeys page: %d, CSP %q; want it listing Desk key with the script allowed", page.Status, page.Header.Get("Content-Security-Policy"))
		}

		// Sign in with it from a fresh browser, asking to go elsewhere.
		fresh := env.NewBrowser(t)
		o2 := passkeyBeginAPI(t, env)
		st, out := postJSON(t, fresh, env, "/signin/passkey", "same-origin",
			map[string]any{"ceremony_id": o2.CeremonyID, "credential": auth.Assert(c, o2.Challenge()), "next": "//evil.example"})
		if st != 200 || out["next"] != "/" {
			t.Fatalf("page sign-in: %d %v; want 200 going to the console (/)", st, out)
		}
		if p := fresh.Get(t, "/"); !strings.Contains(p.Body, a.Email) {
			t.Fatalf("after the passkey sign-in the page shows %.300s; want signed in as %s", p.Body, a.Email)
		}

		// Adding the passkey ended the account's other sessions.
		env.Call(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 401)
		a.Access = env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
		id := env.Call(t, "GET", "/v1/me/passkeys", a.Access, nil).Want(t, 200).List(t, "passkeys")[0]["id"].(string)
		// A post that skips the confirmation step removes nothing.
		wantPage(t, "remove without the step", b.Post(t, "/account/passkeys/remove", url.Values{"id": {id}}), 200, "Remove the passkey", `name="confirm" value="yes"`)
		if n := len(env.Call(t, "GET", "/v1/me/passkeys", a.Access, nil).Want(t, 200).List(t, "passkeys")); n != 1 {
			t.Fatalf("%d passkeys after a post without the step; want 1", n)
		}
		if p := b.Post(t, "/account/passkeys/remove", url.Values{"confirm": {"yes"}, "id": {id}}); p.Status != http.StatusSeeOther {
			t.Fatalf("remove: %d; want 303", p.Status)
		}
		// Removing it ended the other sessions too.
		env.Call(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 401)
		a.Access = env.Login(t, a.Email, a.Password).Want(t, 200).Str("access_token")
		if n := len(env.Call(t, "GET", "/v1/me/passkeys", a.Access, nil).Want(t, 200).List(t, "passkeys")); n != 0 {
			t.Fatalf("%d passkeys after removal; want 0", n)
		}
	})
}

// passkeyBeginAPI begins a usernameless sign-in through the API, as the
// sign-in page's script does.
func passkeyBeginAPI(t *testing.T, env *testenv.Env) *passkeytest.Options {
	t.Helper()
	r := env.Call(t, "POST", "/v1/auth/passkey/begin", "", nil).Want(t, 200)
	var o passkeytest.Options
	if err := json.Unmarshal(r.Body, &o); err != nil {
		t.Fatal(err)
	}
	return &o
}

// TestPasskeySignInEndsPrevious: a passkey sign-in on the sign-in page
// ends the browser's previous session, as a password or link sign-in
// does (issue 23 item 7): the old session's refresh token is refused and
// the account keeps one session for the browser.
func TestPasskeySignInEndsPrevious(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New("http://web.test", "web.test")
		begun := env.Call(t, "POST", "/v1/me/passkeys/begin", a.Access, nil).Want(t, 200)
		var reg passkeytest.Options
		if err := json.Unmarshal(begun.Body, &reg); err != nil {
			t.Fatal(err)
		}
		c, att, err := auth.Create(&reg)
		if err != nil {
			t.Fatal(err)
		}
		env.Call(t, "POST", "/v1/me/passkeys/finish", a.Access, map[string]any{"ceremony_id": reg.CeremonyID, "credential": att}).Want(t, 201)

		b := signedIn(t, env, a)
		u, _ := url.Parse(env.URL)
		sessionCookie := func() string {
			for _, c := range b.Client.Jar.Cookies(u) {
				if c.Name == "gatehouse_session" {
					return c.Value
				}
			}
			t.Fatal("no session cookie")
			return ""
		}
		previous := sessionCookie()
		o := passkeyBeginAPI(t, env)
		if st, out := postJSON(t, b, env, "/signin/passkey", "same-origin",
			map[string]any{"ceremony_id": o.CeremonyID, "credential": auth.Assert(c, o.Challenge())}); st != 200 {
			t.Fatalf("passkey sign-in: %d %v; want 200", st, out)
		}
		if now := sessionCookie(); now == previous {
			t.Fatal("the passkey sign-in kept the previous session cookie")
		}
		env.Refresh(t, previous).Want(t, 401)
		if p := b.Get(t, "/"); !strings.Contains(p.Body, a.Email) {
			t.Fatalf("after the passkey sign-in the page shows %.300s; want signed in as %s", p.Body, a.Email)
		}
	})
}
