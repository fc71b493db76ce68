package identity_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/passkeytest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// The record of security events (issue 24 item 5; docs/security-logging.md):
// log lines with the request's id, client and user, never a secret, and
// audit entries in the person's personal workspace.

// forgedField is the user agent's forged field outside its quotes.
var forgedField = regexp.MustCompile(` user_id=forged( |$)`)

// eventLines returns the log lines of event.
func eventLines(env *testenv.Env, event string) []string {
	var out []string
	for _, l := range strings.Split(env.Logs.String(), "\n") {
		if strings.Contains(l, " event="+event+" ") {
			out = append(out, l)
		}
	}
	return out
}

// lineOf returns the line of event about the request rid, failing the
// test when there is none.
func lineOf(t *testing.T, env *testenv.Env, event, rid string) string {
	t.Helper()
	for _, l := range eventLines(env, event) {
		if strings.Contains(l, " request_id="+rid+" ") {
			return l
		}
	}
	t.Fatalf("no %s line with request_id=%s in the log:\n%s", event, rid, env.Logs.String())
	return ""
}

// wantFields fails the test unless line holds each of fields ("key=value").
func wantFields(t *testing.T, line string, fields ...string) {
	t.Helper()
	for _, f := range fields {
		if !strings.Contains(line, " "+f) {
			t.Errorf("line %q has no %s", line, f)
		}
	}
}

// loginAs posts a password login with the user agent ua.
func loginAs(t *testing.T, env *testenv.Env, email, password, ua string) *testenv.Resp {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req, err := http.NewRequest("POST", env.URL+"/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", ua)
	r, err := env.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSecurityLogPasswordSignIn(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		// A user agent that tries to forge fields (HTTP carries no
		// newline in a header; a path can, below).
		forged := `evil" event=auth.signin.success user_id=forged`
		wrong := "wrong-Pa55word-" + testenv.RandomHex(4)
		bad := loginAs(t, env, a.Email, wrong, forged).Want(t, 401)
		good := loginAs(t, env, a.Email, a.Password, "test-agent/1.0").Want(t, 200)
		unknown := loginAs(t, env, testenv.Email(), wrong, "test-agent/1.0").Want(t, 401)
		env.Svc.Wait()

		t.Run("the failure names the account, the request, the client and the method", func(t *testing.T) {
			l := lineOf(t, env, "auth.signin.failure", bad.Header.Get("X-Request-Id"))
			wantFields(t, l, "level=WARN", "ip=127.0.0.1", "user_id="+a.UserID, "method=password", `reason="invalid email or password"`,
				`user_agent="evil\" event=auth.signin.success user_id=forged"`)
		})
		t.Run("an unknown address's failure names no account", func(t *testing.T) {
			l := lineOf(t, env, "auth.signin.failure", unknown.Header.Get("X-Request-Id"))
			if strings.Contains(l, "user_id=") {
				t.Errorf("line %q names a user", l)
			}
		})
		t.Run("the success names the account and its session", func(t *testing.T) {
			l := lineOf(t, env, "auth.signin.success", good.Header.Get("X-Request-Id"))
			wantFields(t, l, "level=INFO", "ip=127.0.0.1", "user_agent=test-agent/1.0", "user_id="+a.UserID, "method=password",
				"session_id="+testenv.SID(t, good.Str("access_token")))
		})
		t.Run("a user agent forges no field", func(t *testing.T) {
			for _, l := range strings.Split(env.Logs.String(), "\n") {
				if forgedField.MatchString(l) {
					t.Errorf("forged field: %q", l)
				}
			}
		})
		t.Run("no password or token is logged", func(t *testing.T) {
			logs := env.Logs.String()
			for name, secret := range map[string]string{"password": a.Password, "wrong password": wrong,
				"access token": good.Str("access_token"), "refresh token": good.Str("refresh_token")} {
				if secret != "" && strings.Contains(logs, secret) {
					t.Errorf("the log holds the %s", name)
				}
			}
		})
		t.Run("audit entries in the personal workspace", func(t *testing.T) {
			in := env.StoredAudit(t, a.OrgID, "identity.user.signed_in")
			if len(in) == 0 || !strings.Contains(in[0]["meta"], `"method":"password"`) || in[0]["actor_id"] != a.UserID {
				t.Errorf("identity.user.signed_in entries = %v", in)
			}
			failed := env.StoredAudit(t, a.OrgID, "identity.user.signin_failed")
			if len(failed) != 1 || !strings.Contains(failed[0]["meta"], `"method":"password"`) {
				t.Errorf("identity.user.signin_failed entries = %v; want 1", failed)
			}
			for _, e := range append(in, failed...) {
				if strings.Contains(e["meta"], a.Password) || strings.Contains(e["meta"], wrong) {
					t.Errorf("audit entry %v holds a password", e)
				}
			}
		})
	})
}

func TestSecurityLogRefusedRequests(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		noToken := env.Do(t, "GET", "/v1/me/orgs", "", nil).Want(t, 401)
		// A path whose decoded form holds a newline and a forged line.
		forged := env.Do(t, "GET", "/v1/orgs/x%0Atime=x%20level=INFO%20event=auth.signin.success/members", "", nil).Want(t, 401)
		keyToken := env.KeyToken(t, a)
		forbidden := env.Do(t, "GET", "/v1/me/sessions", keyToken, nil).Want(t, 403)

		l := lineOf(t, env, "http.refused", noToken.Header.Get("X-Request-Id"))
		wantFields(t, l, "status=401", "http_method=GET", "path=/v1/me/orgs", "ip=127.0.0.1", `reason="missing bearer token"`)
		l = lineOf(t, env, "http.refused", forged.Header.Get("X-Request-Id"))
		wantFields(t, l, `path="/v1/orgs/x\ntime=x level=INFO event=auth.signin.success/members"`)
		for _, l := range strings.Split(env.Logs.String(), "\n") {
			if strings.HasPrefix(l, "time=x") {
				t.Errorf("forged line: %q", l)
			}
		}
		l = lineOf(t, env, "http.refused", forbidden.Header.Get("X-Request-Id"))
		wantFields(t, l, "status=403", "path=/v1/me/sessions", "user_id="+a.UserID)
		if strings.Contains(env.Logs.String(), keyToken) {
			t.Error("the log holds the key's access token")
		}
	})
}

func TestSecurityLogLockoutAndRateLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.LockOut(t, a.Email)
		locked := env.Login(t, a.Email, a.Password).Want(t, 429)
		env.Svc.Wait()
		t.Run("the lockout", func(t *testing.T) {
			ls := eventLines(env, "auth.lockout")
			if len(ls) != 1 {
				t.Fatalf("%d auth.lockout lines; want 1:\n%s", len(ls), env.Logs.String())
			}
			wantFields(t, ls[0], "level=WARN", "user_id="+a.UserID, "reason=password", "ip=127.0.0.1")
			if es := env.StoredAudit(t, a.OrgID, "identity.user.locked_out"); len(es) != 1 || !strings.Contains(es[0]["meta"], `"reason":"password"`) {
				t.Errorf("identity.user.locked_out entries = %v; want 1", es)
			}
		})
		t.Run("the refused sign-in while locked", func(t *testing.T) {
			l := lineOf(t, env, "http.rate_limited", locked.Header.Get("X-Request-Id"))
			wantFields(t, l, "status=429", "path=/v1/auth/login")
			l = lineOf(t, env, "auth.signin.failure", locked.Header.Get("X-Request-Id"))
			wantFields(t, l, "method=password")
		})
		t.Run("a per-IP limiter's refusal names it", func(t *testing.T) {
			from := env.From(t, "127.0.0.9")
			var last *testenv.Resp
			for i := 0; i < 12; i++ {
				last = from.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": testenv.Email()})
			}
			last.Want(t, 429)
			l := lineOf(t, env, "http.rate_limited", last.Header.Get("X-Request-Id"))
			wantFields(t, l, "limiter=magic", "ip=127.0.0.9", "path=/v1/auth/magic-link")
		})
	})
}

// TestSecurityLogNoSecrets runs the other ways in (magic link, key
// exchange, password reset) and checks their events, and that no secret
// of theirs reaches the log: link tokens, the key, passwords, tokens.
func TestSecurityLogNoSecrets(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		magic := env.MagicToken(t, a.Email)
		in := env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": magic}).Want(t, 200)
		wantFields(t, lineOf(t, env, "auth.signin.success", in.Header.Get("X-Request-Id")), "method=magic_link", "user_id="+a.UserID)

		key := env.CreateUserKey(t, in.Str("access_token"), map[string]any{"name": "test key"})
		secret := key.Str("api_key.secret")
		ex := env.Exchange(t, secret).Want(t, 200)
		wantFields(t, lineOf(t, env, "auth.key_exchange.success", ex.Header.Get("X-Request-Id")), "key_id="+key.Str("api_key.id"), "user_id="+a.UserID)
		bad := env.Exchange(t, secret+"x").Want(t, 401)
		lineOf(t, env, "auth.key_exchange.failure", bad.Header.Get("X-Request-Id"))

		reset := requestReset(t, env, a.Email)
		newPW := "a fresh passphrase " + testenv.RandomHex(3)
		done := env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(reset, newPW)).Want(t, 200)
		wantFields(t, lineOf(t, env, "auth.recovery.reset", done.Header.Get("X-Request-Id")), "user_id="+a.UserID)
		again := env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(reset, newPW)).Want(t, 401)
		lineOf(t, env, "auth.recovery.refused", again.Header.Get("X-Request-Id"))
		if len(eventLines(env, "auth.recovery.request")) == 0 {
			t.Error("no auth.recovery.request line")
		}
		env.Svc.Wait()

		logs := env.Logs.String()
		for name, s := range map[string]string{"password": a.Password, "new password": newPW, "magic link token": magic,
			"api key": secret, "reset token": reset, "access token": in.Str("access_token"), "refresh token": in.Str("refresh_token"),
			"exchanged token": ex.Str("access_token"), "reset session's refresh token": done.Str("refresh_token")} {
			if s == "" {
				t.Errorf("no %s to look for", name)
			} else if strings.Contains(logs, s) {
				t.Errorf("the log holds the %s", name)
			}
		}
	})
}

// TestSecurityLogSecondFactor: the step's success and failure name the
// method, the attempts' lockout is recorded once, each with its audit
// entry, and no code reaches the log.
func TestSecurityLogSecondFactor(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		m := withTOTP(t, env)
		pending := pendingLogin(t, env, m)
		wantFields(t, lineOf(t, env, "auth.signin.success", pending.Header.Get("X-Request-Id")), "method=password", "second_factor_owed=true")
		code := totpAt(t, env, m.Secret, 0)
		ok := env.Call(t, "POST", "/v1/auth/mfa", pending.Str("access_token"), step("totp", code)).Want(t, 200)
		wantFields(t, lineOf(t, env, "auth.mfa.success", ok.Header.Get("X-Request-Id")), "level=INFO", "method=totp", "user_id="+m.UserID,
			"session_id="+testenv.SID(t, ok.Str("access_token")))

		other := pendingLogin(t, env, m).Str("access_token")
		var wrong *testenv.Resp
		for i := 0; i < 5; i++ {
			wrong = env.Call(t, "POST", "/v1/auth/mfa", other, step("totp", "000000")).Want(t, 401)
		}
		wantFields(t, lineOf(t, env, "auth.mfa.failure", wrong.Header.Get("X-Request-Id")), "level=WARN", "method=totp", "user_id="+m.UserID,
			`reason="invalid or already used code"`)
		for i := 0; i < 2; i++ {
			env.Call(t, "POST", "/v1/auth/mfa", other, step("recovery_code", m.Codes[0])).Want(t, 429)
		}
		locks := eventLines(env, "auth.lockout")
		if len(locks) != 1 {
			t.Fatalf("%d auth.lockout lines; want 1 (the first refused attempt):\n%s", len(locks), strings.Join(locks, "\n"))
		}
		wantFields(t, locks[0], "reason=second_factor", "user_id="+m.UserID)
		env.Svc.Wait()
		for action, want := range map[string]int{"identity.user.second_factor_verified": 1, "identity.user.second_factor_failed": 5, "identity.user.locked_out": 1} {
			if got := len(env.StoredAudit(t, m.OrgID, action)); got != want {
				t.Errorf("%d %s entries; want %d", got, action, want)
			}
		}
		logs := env.Logs.String()
		// (A six-digit TOTP code could match a timestamp's digits by
		// chance: the longer secrets are looked for.)
		for _, s := range append([]string{m.Secret}, m.Codes...) {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds a code or secret %q", s)
			}
		}
	})
}

// TestSecurityLogPageRefusals: the refusals the pages write themselves
// (a cross-site form's 403, a sign-in page's per-IP 429) are logged by
// the kernel too.
func TestSecurityLogPageRefusals(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		cross := b.PostCrossSite(t, env.URL+"/signin", url.Values{"email": {"a@example.com"}, "password": {"x"}})
		if cross.Status != 403 {
			t.Fatalf("cross-site sign-in form: %d; want 403", cross.Status)
		}
		wantFields(t, lineOf(t, env, "http.refused", cross.Header.Get("X-Request-Id")), "status=403", "http_method=POST", "path=/signin")
		if got := len(eventLines(env, "http.refused")); got != 1 {
			t.Errorf("%d http.refused lines; want 1 (logged once)", got)
		}
		from := b.From(t, "127.0.0.7")
		var last *testenv.Page
		for i := 0; i < 31; i++ {
			last = from.Post(t, "/signin", url.Values{"email": {testenv.Email()}, "password": {"not the password"}})
		}
		if last.Status != 429 {
			t.Fatalf("31st sign-in page post: %d; want 429", last.Status)
		}
		wantFields(t, lineOf(t, env, "http.rate_limited", last.Header.Get("X-Request-Id")), "status=429", "path=/signin", "ip=127.0.0.7")
	})
}

// TestSecurityLogAuditPersonal: a member whose sign-ins land in a team
// workspace (its default since the invitation) has them recorded in their
// personal workspace only: the team's admins do not see where and when a
// member signs in.
func TestSecurityLogAuditPersonal(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		m := env.Join(t, owner, org, "member")
		in := env.Login(t, m.Email, m.Password).Want(t, 200)
		if id, _, _ := testenv.TokenOrg(t, in.Str("access_token")); id != org {
			t.Fatalf("sign-in scoped to %s; want the team %s", id, org)
		}
		env.Login(t, m.Email, "not the password").Want(t, 401)
		env.Svc.Wait()
		for _, action := range []string{"identity.user.signed_in", "identity.user.signin_failed"} {
			if es := env.StoredAudit(t, org, action); len(es) != 0 {
				t.Errorf("the team's log holds %d %s entries; want none", len(es), action)
			}
			if es := env.StoredAudit(t, m.OrgID, action); len(es) != 1 || es[0]["actor_id"] != m.UserID {
				t.Errorf("the member's personal log holds %v; want one %s", es, action)
			}
		}
	})
}

// TestSecurityLogPasskey: a passkey sign-in and a refused one (a cloned
// authenticator's count going back) are events, the success audited.
func TestSecurityLogPasskey(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		auth := passkeytest.New(webOrigin, webRPID)
		c, _ := addPasskey(t, env, a, auth)
		c.Count = 5
		ok := passkeySignIn(t, env, auth, c).Want(t, 200)
		wantFields(t, lineOf(t, env, "auth.signin.success", ok.Header.Get("X-Request-Id")), "method=passkey", "user_id="+a.UserID)
		c.Count = 3
		bad := passkeySignIn(t, env, auth, c).Want(t, 401)
		wantFields(t, lineOf(t, env, "auth.signin.failure", bad.Header.Get("X-Request-Id")), "method=passkey", "reason=")
		if es := env.StoredAudit(t, a.OrgID, "identity.user.signed_in"); len(es) != 1 || !strings.Contains(es[0]["meta"], `"method":"passkey"`) {
			t.Errorf("identity.user.signed_in entries = %v; want the passkey's", es)
		}
	})
}
