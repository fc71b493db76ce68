package identity_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// Account pre-takeover (issue 10 item 1): anyone may register someone
// else's address with a password of their choosing. A proof of the mailbox
// (a magic link) into an account whose address was never verified takes
// every credential of the registrant away before marking it verified; the
// confirmation link of the sign-up mail keeps the password.

// takeoverSquat is what a registrant of someone else's address holds: the
// registration's session, a second sign-in, a personal API key, an OAuth
// grant's session, a webhook in the personal workspace and a team org made
// the default.
type takeoverSquat struct {
	*testenv.Account
	refresh2, keySecret, grantRefresh, hookID, teamOrg string
}

func takeoverRegister(t *testing.T, env *testenv.Env) *takeoverSquat {
	t.Helper()
	s := &takeoverSquat{Account: env.Register(t)}
	_, s.refresh2 = env.NewSession(t, s.Account)
	s.keySecret = env.CreateUserKey(t, s.Access, map[string]any{"name": "squatter key"}).Str("api_key.secret")
	_, s.grantRefresh = insertGrant(t, env, s.UserID, s.OrgID, "Squatter App")
	s.hookID = env.Do(t, "POST", "/links/v1/webhooks", s.Access, map[string]any{"url": "https://hooks.example.com/squatter"}).Want(t, 200).Str("webhook.id")
	s.teamOrg = env.Do(t, "POST", "/v1/orgs", s.Access, map[string]string{"name": "Squatter Team"}).Want(t, 200).Str("org.id")
	env.Do(t, "POST", "/v1/auth/switch-org", s.Access, map[string]string{"org_id": s.teamOrg}).Want(t, 200)
	// Everything works before the owner proves the mailbox.
	env.Refresh(t, s.refresh2).Want(t, 200)
	s.refresh2 = "" // rotated: the first refresh token is the one checked below
	env.Exchange(t, s.keySecret).Want(t, 200)
	return s
}

// takeoverCheckClaimed checks that none of the squatter's credentials work
// after the owner's proof of the mailbox, whose session answer is owner and
// who has sessions live sessions.
func takeoverCheckClaimed(t *testing.T, env *testenv.Env, s *takeoverSquat, owner *testenv.Resp, sessions int) {
	t.Helper()
	if owner.Str("user.id") != s.UserID || owner.Get("user.email_verified") != true {
		t.Fatalf("owner's session = %s; want the account %s, verified", owner.Body, s.UserID)
	}
	if owner.Str("org.id") != s.OrgID || owner.Str("org.kind") != "personal" {
		t.Errorf("owner's session org = %v; want the personal org %s, not the squatter's default", owner.Get("org"), s.OrgID)
	}
	env.Login(t, s.Email, s.Password).Want(t, 401)
	env.Refresh(t, s.Refresh).Want(t, 401)
	env.Refresh(t, s.grantRefresh).Want(t, 401)
	env.Exchange(t, s.keySecret).Want(t, 401)
	// The squatter's access token outlives its session by up to an hour;
	// it can neither set the first password of the account nor make a key.
	env.Do(t, "POST", "/v1/me/password", s.Access, map[string]string{"new_password": "squatter-again"}).Want(t, 401)
	env.Do(t, "POST", "/v1/me/api-keys", s.Access, map[string]string{"name": "another"}).Want(t, 401)

	access := owner.Str("access_token")
	if rows := env.Do(t, "GET", "/v1/me/grants", access, nil).Want(t, 200).List(t, "grants"); len(rows) != 0 {
		t.Errorf("grants after the claim = %v; want none", rows)
	}
	if rows := env.Do(t, "GET", "/v1/me/api-keys", access, nil).Want(t, 200).List(t, "api_keys"); len(rows) != 0 {
		t.Errorf("api keys after the claim = %v; want none", rows)
	}
	if rows := env.Do(t, "GET", "/v1/me/sessions", access, nil).Want(t, 200).List(t, "sessions"); len(rows) != sessions {
		t.Errorf("sessions after the claim = %v; want only the owner's %d", rows, sessions)
	}
	for _, h := range env.Do(t, "GET", "/links/v1/webhooks", access, nil).Want(t, 200).List(t, "webhooks") {
		if h["id"] == s.hookID && h["active"] != false {
			t.Errorf("squatter's webhook = %v; want active false", h)
		}
	}
	// The owner sets a password without a current one and signs in with it.
	env.Do(t, "POST", "/v1/me/password", access, map[string]string{"new_password": "owner-password"}).Want(t, 200)
	env.Login(t, s.Email, "owner-password").Want(t, 200)
	env.Login(t, s.Email, s.Password).Want(t, 401)
}

// TestSigninTakeoverMagicLink: the owner signs in by magic link through
// the API.
func TestSigninTakeoverMagicLink(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := takeoverRegister(t, env)
		tok := env.MagicToken(t, s.Email)
		owner := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
		takeoverCheckClaimed(t, env, s, owner, 1)
		t.Run("the proof is in the audit log", func(t *testing.T) {
			for _, e := range env.Audit(t, owner.Str("access_token"), s.OrgID, "action=identity.user.email_verified") {
				var m map[string]any
				if meta, _ := e["meta"].(string); json.Unmarshal([]byte(meta), &m) == nil && m["via"] == "magic_link" && m["password_removed"] == true {
					return
				}
			}
			t.Errorf("no identity.user.email_verified entry with via magic_link and password_removed")
		})
	})
}

// TestSigninTakeoverHostedPage: the owner signs in on the hosted page.
func TestSigninTakeoverHostedPage(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := takeoverRegister(t, env)
		b := env.NewBrowser(t)
		before := len(env.MailTexts(s.Email, testenv.MagicLink))
		if res := b.Do(t, "POST", "/signin/magic", url.Values{"email": {s.Email}}); res.Status != 200 {
			t.Fatalf("request link: %d", res.Status)
		}
		tok := env.WaitMailToken(t, s.Email, testenv.MagicLink, before+1)
		if res := b.Do(t, "POST", "/auth/magic", url.Values{"token": {tok}}); res.Status != http.StatusSeeOther {
			t.Fatalf("consume: %d; want 303", res.Status)
		}
		env.Login(t, s.Email, s.Password).Want(t, 401)
		env.Refresh(t, s.Refresh).Want(t, 401)
		env.Exchange(t, s.keySecret).Want(t, 401)
		// The page's session is the owner's and survives a later link,
		// which now changes nothing: the address is verified.
		owner := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": env.MagicToken(t, s.Email)}).Want(t, 200)
		takeoverCheckClaimed(t, env, s, owner, 2)
	})
}

// TestSigninTakeoverKept: the registrant's own path (register, then the
// confirmation link) keeps the password, and a magic link into an account
// already verified changes nothing.
func TestSigninTakeoverKept(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		key := env.CreateUserKey(t, a.Access, map[string]any{"name": "my key"}).Str("api_key.secret")
		// The key's security notice may reach the sink first: the
		// confirmation mail is the one with the link.
		env.WaitMailToken(t, a.Email, testenv.VerifyLink, 1)
		if text := env.MailTexts(a.Email, testenv.VerifyLink)[0]; !strings.Contains(text, "If you did not sign up, ignore this message") {
			t.Errorf("confirmation mail = %q; want it to tell whoever did not sign up to ignore it", text)
		}
		env.VerifyEmail(t, a)
		env.Login(t, a.Email, a.Password).Want(t, 200)
		refreshed := env.Refresh(t, a.Refresh).Want(t, 200)

		tok := env.MagicToken(t, a.Email)
		env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
		env.Login(t, a.Email, a.Password).Want(t, 200)
		env.Refresh(t, refreshed.Str("refresh_token")).Want(t, 200)
		env.Exchange(t, key).Want(t, 200)
	})
}

// TestSigninTakeoverConcurrent: two magic links into one unverified
// account verified at once both sign in, and neither ends the other's
// session.
func TestSigninTakeoverConcurrent(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		s := env.Register(t)
		toks := []string{env.MagicToken(t, s.Email), env.MagicToken(t, s.Email)}
		out := make([]*testenv.Resp, len(toks))
		errs := make([]error, len(toks))
		var wg sync.WaitGroup
		for i, tok := range toks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], errs[i] = env.Try("POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok})
			}()
		}
		wg.Wait()
		for i, r := range out {
			if errs[i] != nil || r.Status != 200 {
				t.Fatalf("verify %d: %v %v; want 200", i, errs[i], r)
			}
		}
		for _, r := range out {
			env.Refresh(t, r.Str("refresh_token")).Want(t, 200)
		}
		env.Login(t, s.Email, s.Password).Want(t, 401)
		env.Refresh(t, s.Refresh).Want(t, 401)
	})
}

// TestSigninTakeoverDomains: domain auto-join and discovery wait for the
// proof of the mailbox, and follow it.
func TestSigninTakeoverDomains(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		auto, suggest := testenv.Domain(), testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, auto, "auto_join")
		env.VerifiedDomain(t, w.Owner.Access, w.Org, suggest, "suggest")
		atAuto, atSuggest := env.RegisterAt(t, auto), env.RegisterAt(t, suggest)
		for _, a := range []*testenv.Account{atAuto, atSuggest} {
			testenv.WantSuggestion(t, env.Call(t, "GET", "/v1/me/discoverable", a.Access, nil).Want(t, 200), "", "")
			env.Call(t, "POST", "/v1/me/discoverable/join", a.Access, nil).Want(t, 403)
			if got := env.Role(t, w.Org, a.UserID); got != "" {
				t.Fatalf("%s is %q in the org before proving the address; want not a member", a.Email, got)
			}
		}
		for _, a := range []*testenv.Account{atAuto, atSuggest} {
			tok := env.MagicToken(t, a.Email)
			a.Access = env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200).Str("access_token")
		}
		if got := env.Role(t, w.Org, atAuto.UserID); got != "member" {
			t.Errorf("auto_join user's role after the magic link = %q; want member", got)
		}
		testenv.WantSuggestion(t, env.Call(t, "GET", "/v1/me/discoverable", atSuggest.Access, nil).Want(t, 200), w.Org, suggest)
	})
}
