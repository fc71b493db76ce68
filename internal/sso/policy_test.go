package sso_test

import (
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestDiscover: an address of a bound domain is sent to its connection,
// whether or not an account exists; any other answers 404 alike.
func TestDiscover(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		existing := env.RegisterAt(t, f.domain)
		var answers []string
		for _, email := range []string{existing.Email, "nobody-" + testenv.RandomHex(3) + "@" + f.domain} {
			r := env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": email}).Want(t, 200)
			if r.Str("connection_id") != f.conn || r.Str("start_url") != env.URL+"/v1/sso/start?connection="+f.conn {
				t.Errorf("discover %s answered %s; want connection %s", email, r.Body, f.conn)
			}
			answers = append(answers, string(r.Body))
		}
		if answers[0] != answers[1] {
			t.Errorf("answers differ for an existing and a missing account: %s vs %s", answers[0], answers[1])
		}
		outsider := env.Register(t)
		a := env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": outsider.Email}).Want(t, 404)
		b := env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": "nobody@" + testenv.Domain()}).Want(t, 404)
		if string(a.Body) != string(b.Body) {
			t.Errorf("404 answers differ: %s vs %s", a.Body, b.Body)
		}
		env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": "not an address"}).Want(t, 400)
	})
}

// TestEnforce: with enforce on, the domain's addresses cannot sign in
// with a password or a magic link, their other sessions end, SSO still
// signs them in, and an owner keeps password sign-in (break-glass).
func TestEnforce(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		person := env.VerifiedAt(t, f.domain)
		env.Call(t, "GET", "/v1/auth/me", person.Token, nil).Want(t, 200)
		// An owner whose address is in the domain.
		boss := env.VerifiedAt(t, f.domain)
		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', 0)`, f.org, boss.UserID)
		// Before: password sign-in works.
		env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": person.Email, "password": person.Password}).Want(t, 200)
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"enforce": true}).Want(t, 200)

		r := env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": person.Email, "password": person.Password}).Want(t, 403)
		if r.Str("error") == "" {
			t.Errorf("refusal %s has no message", r.Body)
		}
		env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": person.Email}).Want(t, 403)
		env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": "new-" + testenv.RandomHex(3) + "@" + f.domain}).Want(t, 403)
		env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": person.Refresh}).Want(t, 401)
		// A wrong password is still a wrong password (nothing learnt).
		env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": person.Email, "password": "wrong-password-1"}).Want(t, 401)

		// Break-glass: the owner keeps the password, and their session.
		env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": boss.Email, "password": boss.Password}).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": boss.Refresh}).Want(t, 200)
		// Other domains are untouched.
		env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": f.owner.Email, "password": f.owner.Password}).Want(t, 200)

		// SSO still signs in (a new person, provisioned).
		resp, b := f.signIn(t, map[string]any{"sub": "e-" + testenv.RandomHex(3), "email": "eve-" + testenv.RandomHex(3) + "@" + f.domain})
		if resp.StatusCode != http.StatusSeeOther || sessionUser(t, env, b) == "" {
			t.Errorf("SSO sign-in under enforce answered %d; want 303 with a session", resp.StatusCode)
		}
	})
}

// TestEnforceMagicLinkMailedBefore: a link mailed before enforce was
// switched on no longer signs in.
func TestEnforceMagicLinkMailedBefore(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		person := env.VerifiedAt(t, f.domain)
		tok := env.MagicToken(t, person.Email)
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"enforce": true}).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 403)
	})
}

// TestEnforceRecovery: under enforce, a password reset (which signs in)
// is refused to the domain's people and left to owners (break-glass).
func TestEnforceRecovery(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		person := env.VerifiedAt(t, f.domain)
		boss := env.VerifiedAt(t, f.domain)
		env.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', 0)`, f.org, boss.UserID)
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"enforce": true}).Want(t, 200)
		const resetLink = "http://web.test/reset-password?token="
		reset := func(email string) *testenv.Resp {
			before := len(env.MailTexts(email, resetLink))
			env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": email}).Want(t, 200)
			tok := env.WaitMailToken(t, email, resetLink, before+1)
			return env.Call(t, "POST", "/v1/auth/recover/verify", "", map[string]string{"token": tok, "new_password": "a new long password 1"})
		}
		reset(person.Email).Want(t, 403)
		reset(boss.Email).Want(t, 200)
	})
}

// TestConnectionOfAnotherWorkspace: a connection is reached only under
// its own workspace's path, even by an owner of another.
func TestConnectionOfAnotherWorkspace(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		other, org := env.Team(t)
		for _, m := range []string{"GET", "PATCH", "DELETE"} {
			env.Call(t, m, "/v1/orgs/"+org+"/sso/"+f.conn, other.Token, map[string]any{"enforce": true}).Want(t, 404)
		}
		env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, other.Token, nil).Want(t, 404)
	})
}

// TestDiscoverLimited: discovery is limited per IP (a lookup loop is
// slowed down, not served).
func TestDiscoverLimited(t *testing.T) {
	testenv.RunWith(t, testenv.Options{AllowPrivate: true, RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		last := 0
		for range 40 {
			last = env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": "a@" + testenv.Domain()}).Status
			if last == 429 {
				break
			}
		}
		if last != 429 {
			t.Errorf("40 discoveries at once answered %d last; want 429", last)
		}
	})
}

// TestDomainRemoved: once the workspace no longer has the domain, its
// connection neither serves nor enforces it.
func TestDomainRemoved(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		person := env.VerifiedAt(t, f.domain)
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"enforce": true}).Want(t, 200)
		env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": person.Email, "password": person.Password}).Want(t, 403)
		env.Exec(t, `DELETE FROM domains WHERE domain = $1`, f.domain)
		env.Call(t, "POST", "/v1/sso/discover", "", map[string]string{"email": person.Email}).Want(t, 404)
		env.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": person.Email, "password": person.Password}).Want(t, 200)
		resp, b := f.signIn(t, map[string]any{"sub": "z-" + testenv.RandomHex(3), "email": "new-" + testenv.RandomHex(3) + "@" + f.domain})
		if resp.StatusCode != 403 || sessionUser(t, env, b) != "" {
			t.Errorf("sign-in at a removed domain answered %d; want 403 and no session", resp.StatusCode)
		}
	})
}
