package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPatchMe covers "PATCH /v1/me" (spec 4.2): a partial update of name
// and avatar_url answering {user}, allowed to API-key sessions.
func TestPatchMe(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		keyToken := env.KeyToken(t, a)

		// profile checks the answer of a successful update, then the stored
		// profile (also after a refusal).
		profile := func(name, avatar string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				if r.Status == 200 {
					if got := r.Str("user.id"); got != a.UserID {
						t.Errorf("user.id = %q; want %q", got, a.UserID)
					}
					if got := r.Str("user.email"); got != a.Email {
						t.Errorf("user.email = %q; want %q", got, a.Email)
					}
					if got := r.Str("user.name"); got != name {
						t.Errorf("user.name = %q; want %q", got, name)
					}
					if got := r.Str("user.avatar_url"); got != avatar {
						t.Errorf("user.avatar_url = %q; want %q", got, avatar)
					}
					if _, ok := r.Get("user.email_verified").(bool); !ok {
						t.Errorf("user.email_verified = %#v; want a boolean", r.Get("user.email_verified"))
					}
				}
				me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200)
				if got := me.Str("user.name"); got != name {
					t.Errorf("stored name = %q; want %q", got, name)
				}
				if got := me.Str("user.avatar_url"); got != avatar {
					t.Errorf("stored avatar_url = %q; want %q", got, avatar)
				}
			}
		}
		patch := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "PATCH", Path: "/v1/me", Token: token, Body: body, Want: want, Check: check}
		}
		kept := profile("Ada L", "http://img.example.com/b.png")
		// Cases run in order; each successful one leaves the profile that
		// the next one starts from, so a partial update that clobbered the
		// other field would show.
		env.RunCases(t, []testenv.Case{
			patch("avatar only", a.Access, map[string]any{"avatar_url": "https://img.example.com/a.png"}, 200, profile("Test User", "https://img.example.com/a.png")),
			patch("name only keeps avatar", a.Access, map[string]any{"name": "Ada Lovelace"}, 200, profile("Ada Lovelace", "https://img.example.com/a.png")),
			patch("both with an api-key token", keyToken, map[string]any{"name": "Ada L", "avatar_url": "http://img.example.com/b.png"}, 200, profile("Ada L", "http://img.example.com/b.png")),
			patch("empty object", a.Access, map[string]any{}, 400, kept),
			patch("empty body", a.Access, "", 400, kept),
			patch("both null", a.Access, `{"name": null, "avatar_url": null}`, 400, kept),
			patch("empty name", a.Access, map[string]any{"name": ""}, 400, kept),
			patch("blank name", a.Access, map[string]any{"name": "   "}, 400, kept),
			patch("empty avatar_url", a.Access, map[string]any{"avatar_url": ""}, 400, kept),
			patch("avatar_url not a url", a.Access, map[string]any{"avatar_url": "not a url"}, 400, kept),
			patch("avatar_url ftp", a.Access, map[string]any{"avatar_url": "ftp://x"}, 400, kept),
			patch("valid name with bad avatar changes nothing", a.Access, map[string]any{"name": "Changed", "avatar_url": "ftp://x"}, 400, kept),
			patch("name is a number", a.Access, `{"name": 5}`, 400, kept),
			patch("name is an array", a.Access, `{"name": ["x"]}`, 400, kept),
			patch("avatar_url is a boolean", a.Access, `{"avatar_url": true}`, 400, kept),
			patch("body is an array", a.Access, `[]`, 400, kept),
			patch("body is not json", a.Access, `{"name":`, 400, kept),
			patch("no token", "", map[string]any{"name": "Nobody"}, 401, kept),
			patch("garbage token", "not-a-jwt", map[string]any{"name": "Nobody"}, 401, kept),
		})
	})
}

// TestPatchMeLanguage: the language preference is a field of the User
// (GET /v1/auth/me, PATCH's answer), set by PATCH /v1/me with a supported
// code, cleared with "" (back to Accept-Language), left alone by null, and
// refused (400, nothing changed) for any other value; mail then follows it.
func TestPatchMeLanguage(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		lang := func(want string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				if r.Status == 200 {
					if got := r.Str("user.language"); got != want {
						t.Errorf("answered language = %q; want %q", got, want)
					}
				}
				if got := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200).Str("user.language"); got != want {
					t.Errorf("stored language = %q; want %q", got, want)
				}
			}
		}
		refused := func(t *testing.T, r *testenv.Resp) {
			if got := r.Str("error"); got != "language must be one of: en, de" {
				t.Errorf("error = %q", got)
			}
			lang("de")(t, r)
		}
		patch := func(name string, body any, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "PATCH", Path: "/v1/me", Token: a.Access, Body: body, Want: want, Check: check}
		}
		env.RunCases(t, []testenv.Case{
			patch("none yet: automatic", map[string]any{"name": a.Name}, 200, lang("")),
			patch("set German", map[string]any{"language": "de"}, 200, lang("de")),
			patch("null leaves it", `{"name": "Ada", "language": null}`, 200, lang("de")),
			patch("unknown language", map[string]any{"language": "fr"}, 400, refused),
			patch("a region is not a code", map[string]any{"language": "de-DE"}, 400, refused),
			patch("capitals", map[string]any{"language": "DE"}, 400, refused),
			patch("unknown language with a valid name changes nothing", map[string]any{"name": "Changed", "language": "xx"}, 400, refused),
			patch("a number", `{"language": 1}`, 400, lang("de")),
			patch("set English", map[string]any{"language": "en"}, 200, lang("en")),
			patch("clear", map[string]any{"language": ""}, 200, lang("")),
		})
		if got := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Str("user.name"); got != "Ada" {
			t.Errorf("name = %q after refusals; want Ada", got)
		}

		// Mail follows the preference set through the API, whatever the
		// request's language; cleared, it follows the request's again.
		recoverIn := func(accept, subject string) {
			t.Helper()
			env.DoIn(t, accept, "POST", "/v1/auth/recover", "", map[string]string{"email": a.Email}).Want(t, 200)
			env.WaitMail(t)
			if got := lastSubject(env, a.Email); !strings.HasPrefix(got, subject) {
				t.Errorf("reset mail with Accept-Language %q: %q; want %q…", accept, got, subject)
			}
		}
		recoverIn("de", "Neues Passwort für") // cleared: the request's language
		env.Do(t, "PATCH", "/v1/me", a.Access, map[string]any{"language": "en"}).Want(t, 200)
		recoverIn("de", "Set a new")
		env.Do(t, "PATCH", "/v1/me", a.Access, map[string]any{"language": "de"}).Want(t, 200)
		recoverIn("en-US", "Neues Passwort für")
		recoverIn("", "Neues Passwort für")
	})
}

// TestDeleteMe covers "DELETE /v1/me" (spec 4.2, section 7: 409 as sole
// owner of a team org that still has other members).
func TestDeleteMe(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("api-key token is refused", func(t *testing.T) {
			a := env.Register(t)
			env.Call(t, "DELETE", "/v1/me", env.KeyToken(t, a), nil).Want(t, 403)
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		})

		t.Run("no token", func(t *testing.T) {
			env.Call(t, "DELETE", "/v1/me", "", nil).Want(t, 401)
		})

		t.Run("sole owner of a team org with other members", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			name := "Acme Robotics " + testenv.RandomHex(3)
			org := env.TeamOrg(t, name, [2]string{a.UserID, "owner"}, [2]string{b.UserID, "admin"})
			r := env.Do(t, "DELETE", "/v1/me", a.Access, nil)
			if r.Status != 409 {
				t.Fatalf("status = %d, body %s; want 409", r.Status, r.Body)
			}
			if msg := r.Str("error"); !strings.Contains(msg, name) {
				t.Errorf("error = %q; want it to name the org %q", msg, name)
			}
			// Nothing was deleted.
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
			if env.OrgDeleted(t, org) {
				t.Errorf("org %s deleted after a refused account deletion", org)
			}
		})

		t.Run("deletes the account and what only it used", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			_, otherRefresh := env.NewSession(t, a)
			keySecret := env.CreateUserKey(t, a.Access, map[string]any{"name": "deploy key"}).Str("api_key.secret")
			alone := env.TeamOrg(t, "Solo Team", [2]string{a.UserID, "owner"})
			shared := env.TeamOrg(t, "Shared Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})

			r := env.Do(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			env.RunCases(t, []testenv.Case{
				{Name: "login", Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"email": a.Email, "password": a.Password}, Want: 401},
				{Name: "refresh of the deleting session", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": a.Refresh}, Want: 401},
				{Name: "refresh of another session", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": otherRefresh}, Want: 401},
				{Name: "key exchange", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": keySecret}, Want: 401},
				{Name: "verify with the old access token", Method: "GET", Path: "/v1/auth/verify", Token: a.Access, Want: 401},
				{Name: "profile update with the old access token", Method: "PATCH", Path: "/v1/me", Token: a.Access, Body: map[string]string{"name": "Ghost"}, Want: 401},
				{Name: "workspace list with the old access token", Method: "GET", Path: "/v1/me/orgs", Token: a.Access, Want: 401},
				{Name: "password change with the old access token", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]string{"current_password": a.Password, "new_password": "ghost-password"}, Want: 401},
				{Name: "key creation with the old access token", Method: "POST", Path: "/v1/me/api-keys", Token: a.Access, Body: map[string]string{"name": "Ghost key"}, Want: 401},
				{Name: "the address can register again", Method: "POST", Path: "/v1/auth/register", Body: map[string]string{"email": a.Email, "password": "another-password"}, Want: 200},
			})
			if !env.OrgDeleted(t, alone) {
				t.Errorf("team org %s where the user was alone is still live", alone)
			}
			if env.OrgDeleted(t, shared) {
				t.Errorf("team org %s with another owner was deleted", shared)
			}
			var n int
			if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM memberships WHERE user_id = $1`, a.UserID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("memberships of the deleted user = %d; want 0", n)
			}
			env.Do(t, "GET", "/v1/auth/verify", b.Access, nil).Want(t, 200)
		})

		t.Run("one of two owners", func(t *testing.T) {
			a, b, c := env.Register(t), env.Register(t), env.Register(t)
			org := env.TeamOrg(t, "Two Owners", [2]string{a.UserID, "owner"}, [2]string{b.UserID, "owner"}, [2]string{c.UserID, "member"})
			env.Do(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			if env.OrgDeleted(t, org) {
				t.Errorf("org %s deleted; want it kept with its other owner", org)
			}
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 401)
			var role string
			if err := env.Store.DB().QueryRow(`SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2`, org, b.UserID).Scan(&role); err != nil {
				t.Fatal(err)
			}
			if role != "owner" {
				t.Errorf("other owner's role = %q; want owner", role)
			}
		})
	})
}

// TestChangePassword covers "POST /v1/me/password" (spec 4.2 rule 1;
// section 7: a wrong current password is 403, not 401).
func TestChangePassword(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("refused requests", func(t *testing.T) {
			a := env.Register(t)
			keyToken := env.KeyToken(t, a)
			env.RunCases(t, []testenv.Case{
				{Name: "empty body", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: "", Want: 400},
				{Name: "missing new_password", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": a.Password}, Want: 400},
				{Name: "new_password under 8 characters", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": a.Password, "new_password": "1234567"}, Want: 400},
				{Name: "new_password over 1024 bytes", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": a.Password, "new_password": strings.Repeat("x", 1025)}, Want: 400},
				{Name: "new_password not a string", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: `{"new_password": 12345678}`, Want: 400},
				{Name: "missing current_password", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"new_password": "long-enough-1"}, Want: 400},
				{Name: "wrong current_password", Method: "POST", Path: "/v1/me/password", Token: a.Access, Body: map[string]any{"current_password": "wrong-password", "new_password": "long-enough-1"}, Want: 403},
				{Name: "api-key token", Method: "POST", Path: "/v1/me/password", Token: keyToken, Body: map[string]any{"current_password": a.Password, "new_password": "long-enough-1"}, Want: 403},
				{Name: "no token", Method: "POST", Path: "/v1/me/password", Body: map[string]any{"current_password": a.Password, "new_password": "long-enough-1"}, Want: 401},
			})
			// None of them changed the password.
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		})

		t.Run("change signs other sessions out", func(t *testing.T) {
			a := env.Register(t)
			_, refresh1 := env.NewSession(t, a)
			_, refresh2 := env.NewSession(t, a)
			const next = "a-brand-new-password"
			r := env.Do(t, "POST", "/v1/me/password", a.Access, map[string]any{"current_password": a.Password, "new_password": next}).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			env.RunCases(t, []testenv.Case{
				{Name: "old password", Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"email": a.Email, "password": a.Password}, Want: 401},
				{Name: "new password", Method: "POST", Path: "/v1/auth/login", Body: map[string]string{"email": a.Email, "password": next}, Want: 200},
				{Name: "other session 1 refresh", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": refresh1}, Want: 401},
				{Name: "other session 2 refresh", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": refresh2}, Want: 401},
				{Name: "current session refresh", Method: "POST", Path: "/v1/auth/refresh", Body: map[string]string{"refresh_token": a.Refresh}, Want: 200},
			})
		})

		t.Run("magic-link account sets a first password", func(t *testing.T) {
			email := testenv.Email()
			env.Do(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}).Want(t, 200)
			m := env.Mail.WaitFor(t, email, 5*time.Second)
			tok := testenv.TokenFromLink(t, m.Text, "http://web.test/auth/magic?token=")
			s := env.Do(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
			access := s.Str("access_token")

			const first = "first-password-1"
			env.Do(t, "POST", "/v1/me/password", access, map[string]any{"new_password": first}).Want(t, 200)
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": first}).Want(t, 200)
			// Now the account has a password: the next change needs it.
			r := env.Do(t, "POST", "/v1/me/password", access, map[string]any{"new_password": "second-password-2"})
			if r.Status != 400 {
				t.Errorf("second change without current_password: status = %d, body %s; want 400", r.Status, r.Body)
			}
			env.Do(t, "POST", "/v1/me/password", access, map[string]any{"current_password": first, "new_password": "second-password-2"}).Want(t, 200)
		})
	})
}

// TestResendVerification covers "POST /v1/me/verify-email/resend" (spec
// 4.2 rule 2, section 8: no new mail while a usable link is under a minute
// old).
func TestResendVerification(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("throttled, sent, already verified", func(t *testing.T) {
			a := env.Register(t)
			if got := env.MailsTo(t, a.Email); got != 1 {
				t.Fatalf("mails after registration = %d; want 1", got)
			}
			resend := func() string {
				t.Helper()
				r := env.Do(t, "POST", "/v1/me/verify-email/resend", a.Access, nil).Want(t, 200)
				msg := r.Str("message")
				if msg == "" {
					t.Fatalf("body = %s; want a {message}", r.Body)
				}
				return msg
			}

			throttled := resend()
			if got := env.MailsTo(t, a.Email); got != 1 {
				t.Errorf("mails after a resend right after registration = %d; want 1 (throttled)", got)
			}

			env.Clock.Advance(61 * time.Second)
			sent := resend()
			if got := env.MailsTo(t, a.Email); got != 2 {
				t.Fatalf("mails after a resend 61 s later = %d; want 2", got)
			}
			if again := resend(); again != throttled {
				t.Errorf("resend right after a resend: message %q; want the throttled one %q", again, throttled)
			}
			if got := env.MailsTo(t, a.Email); got != 2 {
				t.Errorf("mails after a resend right after a resend = %d; want 2", got)
			}

			var last string
			for _, m := range env.Mail.Messages() {
				if len(m.To) == 1 && m.To[0] == a.Email {
					last = m.Text
				}
			}
			tok := testenv.TokenFromLink(t, last, "http://web.test/verify-email?token=")
			env.Do(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": tok}).Want(t, 200)

			env.Clock.Advance(61 * time.Second)
			verified := resend()
			if got := env.MailsTo(t, a.Email); got != 2 {
				t.Errorf("mails after a resend on a verified account = %d; want 2", got)
			}

			if throttled == sent || sent == verified || throttled == verified {
				t.Errorf("messages throttled %q, sent %q, verified %q; want three different texts", throttled, sent, verified)
			}
		})

		t.Run("refused requests", func(t *testing.T) {
			a := env.Register(t)
			// Each refusal starts past the throttle minute and must send no mail.
			var before int
			advance := func(t *testing.T) {
				env.Clock.Advance(61 * time.Second)
				before = env.MailsTo(t, a.Email)
			}
			noMail := func(t *testing.T, r *testenv.Resp) {
				if got := env.MailsTo(t, a.Email); got != before {
					t.Errorf("mails = %d; want %d (none sent)", got, before)
				}
			}
			const path = "/v1/me/verify-email/resend"
			env.RunCases(t, []testenv.Case{
				{Name: "api-key token", Method: "POST", Path: path, Token: env.KeyToken(t, a), Want: 403, Before: advance, Check: noMail},
				{Name: "no token", Method: "POST", Path: path, Want: 401, Before: advance, Check: noMail},
			})
		})
	})
}

// checkMyOrgs checks the shape of every row of a GET /v1/me/orgs answer
// (spec 2: Org + member_count + is_default, no tools) and that exactly one
// row is the default; it returns the rows by id.
func checkMyOrgs(t *testing.T, r *testenv.Resp) map[string]map[string]any {
	t.Helper()
	rows := r.List(t, "orgs")
	byID := map[string]map[string]any{}
	defaults := 0
	for _, o := range rows {
		for _, f := range []string{"id", "name", "slug", "avatar_url", "kind", "created_at"} {
			if _, ok := o[f].(string); !ok {
				t.Errorf("org %v: %s = %#v; want a string", o["id"], f, o[f])
			}
		}
		testenv.Time(t, "created_at", o["created_at"])
		if k := o["kind"]; k != "personal" && k != "team" {
			t.Errorf("org %v: kind = %#v; want personal or team", o["id"], k)
		}
		n, ok := o["member_count"].(float64)
		if !ok || n != float64(int(n)) || n < 1 {
			t.Errorf("org %v: member_count = %#v; want a positive integer", o["id"], o["member_count"])
		}
		d, ok := o["is_default"].(bool)
		if !ok {
			t.Errorf("org %v: is_default = %#v; want a boolean", o["id"], o["is_default"])
		}
		if d {
			defaults++
		}
		if _, ok := o["tools"]; ok {
			t.Errorf("org %v has a tools field; the workspace list carries none", o["id"])
		}
		byID[o["id"].(string)] = o
	}
	if defaults != 1 {
		t.Errorf("orgs with is_default true = %d in %s; want exactly 1", defaults, r.Body)
	}
	return byID
}

// TestMyOrgs covers "GET /v1/me/orgs" (spec 4.2 rule 3).
func TestMyOrgs(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("personal org only", func(t *testing.T) {
			a := env.Register(t)
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			p, ok := orgs[a.OrgID]
			if len(orgs) != 1 || !ok {
				t.Fatalf("orgs = %v; want only the personal org %s", orgs, a.OrgID)
			}
			if p["kind"] != "personal" || p["is_default"] != true || p["member_count"] != float64(1) {
				t.Errorf("personal org = %v; want kind personal, is_default true, member_count 1", p)
			}
		})

		t.Run("team orgs and the default", func(t *testing.T) {
			a, b, c := env.Register(t), env.Register(t), env.Register(t)
			team := env.TeamOrg(t, "Team Three", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"}, [2]string{c.UserID, "member"})
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if len(orgs) != 2 {
				t.Fatalf("orgs = %d; want 2 (personal and team)", len(orgs))
			}
			if o := orgs[team]; o == nil || o["kind"] != "team" || o["name"] != "Team Three" || o["member_count"] != float64(3) || o["is_default"] != false {
				t.Errorf("team org = %v; want kind team, name Team Three, member_count 3, is_default false", o)
			}
			if o := orgs[a.OrgID]; o == nil || o["kind"] != "personal" || o["is_default"] != true {
				t.Errorf("personal org = %v; want kind personal, is_default true", o)
			}

			env.Do(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
			orgs = checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if orgs[team]["is_default"] != true || orgs[a.OrgID]["is_default"] != false {
				t.Errorf("after switch-org: team is_default %v, personal is_default %v; want true, false",
					orgs[team]["is_default"], orgs[a.OrgID]["is_default"])
			}
		})

		t.Run("api-key token", func(t *testing.T) {
			a := env.Register(t)
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", env.KeyToken(t, a), nil).Want(t, 200))
			if _, ok := orgs[a.OrgID]; !ok {
				t.Errorf("orgs = %v; want the personal org %s", orgs, a.OrgID)
			}
		})

		t.Run("no token", func(t *testing.T) {
			env.Call(t, "GET", "/v1/me/orgs", "", nil).Want(t, 401)
		})

		// The default org (the last switch-org) is deleted: the list still
		// marks exactly one default, the org a new sign-in lands in.
		t.Run("default org deleted", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			team := env.TeamOrg(t, "Doomed Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})
			env.Do(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": team}).Want(t, 200)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, team, env.Clock.Now().UnixMicro())
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if len(orgs) != 1 || orgs[a.OrgID]["is_default"] != true {
				t.Errorf("orgs = %v; want only the personal org %s, marked default", orgs, a.OrgID)
			}
			login := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
			if got := login.Str("org.id"); got != a.OrgID {
				t.Errorf("login lands in org %s; want the personal org %s", got, a.OrgID)
			}
		})

		// Spec 4.2 rule 3: the personal org is created first if missing.
		t.Run("personal org missing", func(t *testing.T) {
			a := env.Register(t)
			env.Exec(t, `UPDATE orgs SET deleted_at = $2 WHERE id = $1`, a.OrgID, env.Clock.Now().UnixMicro())
			orgs := checkMyOrgs(t, env.Do(t, "GET", "/v1/me/orgs", a.Access, nil).Want(t, 200))
			if len(orgs) != 1 {
				t.Fatalf("orgs = %v; want one new personal org", orgs)
			}
			for id, o := range orgs {
				if id == a.OrgID || o["kind"] != "personal" || o["is_default"] != true {
					t.Errorf("org %s = %v; want a new personal org marked default", id, o)
				}
			}
		})
	})
}
