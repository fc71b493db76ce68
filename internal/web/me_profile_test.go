package web_test

import (
	"strings"
	"testing"

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
