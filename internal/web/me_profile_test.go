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
		keyToken := meKeyToken(t, env, a)

		// Cases run in order; each successful one leaves the profile that
		// the next one starts from, so a partial update that clobbered the
		// other field would show.
		tests := []struct {
			name       string
			token      string
			body       any
			wantStatus int
			wantName   string // profile after the request (also after a failure)
			wantAvatar string
		}{
			{"avatar only", a.Access, map[string]any{"avatar_url": "https://img.example.com/a.png"}, 200, "Test User", "https://img.example.com/a.png"},
			{"name only keeps avatar", a.Access, map[string]any{"name": "Ada Lovelace"}, 200, "Ada Lovelace", "https://img.example.com/a.png"},
			{"both with an api-key token", keyToken, map[string]any{"name": "Ada L", "avatar_url": "http://img.example.com/b.png"}, 200, "Ada L", "http://img.example.com/b.png"},
			{"empty object", a.Access, map[string]any{}, 400, "Ada L", "http://img.example.com/b.png"},
			{"empty body", a.Access, "", 400, "Ada L", "http://img.example.com/b.png"},
			{"both null", a.Access, `{"name": null, "avatar_url": null}`, 400, "Ada L", "http://img.example.com/b.png"},
			{"empty name", a.Access, map[string]any{"name": ""}, 400, "Ada L", "http://img.example.com/b.png"},
			{"blank name", a.Access, map[string]any{"name": "   "}, 400, "Ada L", "http://img.example.com/b.png"},
			{"empty avatar_url", a.Access, map[string]any{"avatar_url": ""}, 400, "Ada L", "http://img.example.com/b.png"},
			{"avatar_url not a url", a.Access, map[string]any{"avatar_url": "not a url"}, 400, "Ada L", "http://img.example.com/b.png"},
			{"avatar_url ftp", a.Access, map[string]any{"avatar_url": "ftp://x"}, 400, "Ada L", "http://img.example.com/b.png"},
			{"valid name with bad avatar changes nothing", a.Access, map[string]any{"name": "Changed", "avatar_url": "ftp://x"}, 400, "Ada L", "http://img.example.com/b.png"},
			{"name is a number", a.Access, `{"name": 5}`, 400, "Ada L", "http://img.example.com/b.png"},
			{"name is an array", a.Access, `{"name": ["x"]}`, 400, "Ada L", "http://img.example.com/b.png"},
			{"avatar_url is a boolean", a.Access, `{"avatar_url": true}`, 400, "Ada L", "http://img.example.com/b.png"},
			{"body is an array", a.Access, `[]`, 400, "Ada L", "http://img.example.com/b.png"},
			{"body is not json", a.Access, `{"name":`, 400, "Ada L", "http://img.example.com/b.png"},
			{"no token", "", map[string]any{"name": "Nobody"}, 401, "Ada L", "http://img.example.com/b.png"},
			{"garbage token", "not-a-jwt", map[string]any{"name": "Nobody"}, 401, "Ada L", "http://img.example.com/b.png"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := env.Do(t, "PATCH", "/v1/me", tt.token, tt.body)
				if r.Status != tt.wantStatus {
					t.Fatalf("status = %d, body %s; want %d", r.Status, r.Body, tt.wantStatus)
				}
				if tt.wantStatus == 200 {
					if got := r.Str("user.id"); got != a.UserID {
						t.Errorf("user.id = %q; want %q", got, a.UserID)
					}
					if got := r.Str("user.email"); got != a.Email {
						t.Errorf("user.email = %q; want %q", got, a.Email)
					}
					if got := r.Str("user.name"); got != tt.wantName {
						t.Errorf("user.name = %q; want %q", got, tt.wantName)
					}
					if got := r.Str("user.avatar_url"); got != tt.wantAvatar {
						t.Errorf("user.avatar_url = %q; want %q", got, tt.wantAvatar)
					}
					if _, ok := r.Get("user.email_verified").(bool); !ok {
						t.Errorf("user.email_verified = %#v; want a boolean", r.Get("user.email_verified"))
					}
				} else {
					meWantError(t, r)
				}
				me := env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200)
				if got := me.Str("user.name"); got != tt.wantName {
					t.Errorf("stored name = %q; want %q", got, tt.wantName)
				}
				if got := me.Str("user.avatar_url"); got != tt.wantAvatar {
					t.Errorf("stored avatar_url = %q; want %q", got, tt.wantAvatar)
				}
			})
		}
	})
}

// TestDeleteMe covers "DELETE /v1/me" (spec 4.2, section 7: 409 as sole
// owner of a team org that still has other members).
func TestDeleteMe(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		t.Run("api-key token is refused", func(t *testing.T) {
			a := env.Register(t)
			r := env.Do(t, "DELETE", "/v1/me", meKeyToken(t, env, a), nil)
			if r.Status != 403 {
				t.Fatalf("status = %d, body %s; want 403", r.Status, r.Body)
			}
			meWantError(t, r)
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
		})

		t.Run("no token", func(t *testing.T) {
			r := env.Do(t, "DELETE", "/v1/me", "", nil)
			if r.Status != 401 {
				t.Fatalf("status = %d, body %s; want 401", r.Status, r.Body)
			}
			meWantError(t, r)
		})

		t.Run("sole owner of a team org with other members", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			name := "Acme Robotics " + testenv.RandomHex(3)
			org := meTeamOrg(t, env, name, [2]string{a.UserID, "owner"}, [2]string{b.UserID, "admin"})
			r := env.Do(t, "DELETE", "/v1/me", a.Access, nil)
			if r.Status != 409 {
				t.Fatalf("status = %d, body %s; want 409", r.Status, r.Body)
			}
			if msg := r.Str("error"); !strings.Contains(msg, name) {
				t.Errorf("error = %q; want it to name the org %q", msg, name)
			}
			// Nothing was deleted.
			env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
			if meOrgDeleted(t, env, org) {
				t.Errorf("org %s deleted after a refused account deletion", org)
			}
		})

		t.Run("deletes the account and what only it used", func(t *testing.T) {
			a, b := env.Register(t), env.Register(t)
			_, otherRefresh := meLogin(t, env, a)
			keySecret := meCreateKey(t, env, a.Access, map[string]any{"name": "deploy key"}).Str("api_key.secret")
			alone := meTeamOrg(t, env, "Solo Team", [2]string{a.UserID, "owner"})
			shared := meTeamOrg(t, env, "Shared Team", [2]string{b.UserID, "owner"}, [2]string{a.UserID, "member"})

			r := env.Do(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			if r.Str("message") == "" {
				t.Errorf("body = %s; want a {message}", r.Body)
			}
			checks := []struct {
				name       string
				method     string
				path       string
				token      string
				body       any
				wantStatus int
			}{
				{"login", "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}, 401},
				{"refresh of the deleting session", "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": a.Refresh}, 401},
				{"refresh of another session", "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": otherRefresh}, 401},
				{"key exchange", "POST", "/v1/auth/token", "", map[string]string{"api_key": keySecret}, 401},
				{"verify with the old access token", "GET", "/v1/auth/verify", a.Access, nil, 401},
				{"profile update with the old access token", "PATCH", "/v1/me", a.Access, map[string]string{"name": "Ghost"}, 401},
				{"workspace list with the old access token", "GET", "/v1/me/orgs", a.Access, nil, 401},
				{"password change with the old access token", "POST", "/v1/me/password", a.Access, map[string]string{"current_password": a.Password, "new_password": "ghost-password"}, 401},
				{"key creation with the old access token", "POST", "/v1/me/api-keys", a.Access, map[string]string{"name": "Ghost key"}, 401},
				{"the address can register again", "POST", "/v1/auth/register", "", map[string]string{"email": a.Email, "password": "another-password"}, 200},
			}
			for _, c := range checks {
				t.Run(c.name, func(t *testing.T) {
					r := env.Do(t, c.method, c.path, c.token, c.body)
					if r.Status != c.wantStatus {
						t.Errorf("status = %d, body %s; want %d", r.Status, r.Body, c.wantStatus)
					}
				})
			}
			if !meOrgDeleted(t, env, alone) {
				t.Errorf("team org %s where the user was alone is still live", alone)
			}
			if meOrgDeleted(t, env, shared) {
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
			org := meTeamOrg(t, env, "Two Owners", [2]string{a.UserID, "owner"}, [2]string{b.UserID, "owner"}, [2]string{c.UserID, "member"})
			env.Do(t, "DELETE", "/v1/me", a.Access, nil).Want(t, 200)
			if meOrgDeleted(t, env, org) {
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
