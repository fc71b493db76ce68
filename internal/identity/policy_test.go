package identity_test

import (
	"context"
	"testing"

	"github.com/gatehouse/gatehouse/internal/password"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPasswordPolicy: registration, a password change and a recovery
// refuse a common password and one holding a context word (the product's
// name, a word of the address's local part, the first label of its
// domain), in any case, with a 400 naming the reason; nothing changes.
// Words shorter than 4 characters do not count, and sign-in is not checked.
func TestPasswordPolicy(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		refused := []struct{ name, pw, reason string }{
			{"common", "Password123", "too common"},
			{"common in capitals", "QWERTYUIOP", "too common"},
			{"product name", "my-GateHouse-key-77", `"gatehouse"`},
			{"local part", "lovelace-rules-77", "your email address"},
			{"local part in capitals", "xx-LOVELACE+WORK-77", "your email address"},
			{"domain label", "Analytical-engine-1843", "domain name"},
		}
		const allowed = "ada's pinned kettle" // holds "ada": too short to count
		newAccount := func(*testing.T) (email string) {
			return "ada.lovelace+work-" + testenv.RandomHex(3) + "@analytical.test"
		}
		flows := []struct {
			name  string
			field string
			// set tries pw on a fresh account at email and returns the answer.
			set func(t *testing.T, email, pw string) *testenv.Resp
			// unchanged checks a refusal changed nothing.
			unchanged func(t *testing.T, email string)
		}{
			{"register", "password",
				func(t *testing.T, email, pw string) *testenv.Resp {
					return env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": pw})
				},
				func(t *testing.T, email string) {
					env.Login(t, email, "anything at all").Want(t, 401)
				}},
			{"change", "new_password",
				func(t *testing.T, email, pw string) *testenv.Resp {
					r := env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "first password 1"}).Want(t, 200)
					return env.Call(t, "POST", "/v1/me/password", r.Str("access_token"), map[string]string{"current_password": "first password 1", "new_password": pw})
				},
				func(t *testing.T, email string) {
					env.Login(t, email, "first password 1").Want(t, 200)
				}},
			{"recover", "new_password",
				func(t *testing.T, email, pw string) *testenv.Resp {
					env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "first password 1"}).Want(t, 200)
					return env.Call(t, "POST", "/v1/auth/recover/verify", "", resetBody(requestReset(t, env, email), pw))
				},
				func(t *testing.T, email string) {
					env.Login(t, email, "first password 1").Want(t, 200)
				}},
		}
		for _, f := range flows {
			t.Run(f.name, func(t *testing.T) {
				for _, tc := range refused {
					t.Run(tc.name, func(t *testing.T) {
						email := newAccount(t)
						r := f.set(t, email, tc.pw).Want(t, 400)
						testenv.ErrorNames(f.field, tc.reason)(t, r)
						f.unchanged(t, email)
					})
				}
				t.Run("allowed", func(t *testing.T) {
					email := newAccount(t)
					f.set(t, email, allowed).Want(t, 200)
					env.Login(t, email, allowed).Want(t, 200)
				})
			})
		}
		// Sign-in is never checked: a common password set before the
		// policy still signs in.
		t.Run("login is not checked", func(t *testing.T) {
			a := env.Register(t)
			h, err := password.NewHasher(password.Params{Memory: 512, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}, 1).Hash(context.Background(), "password123")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.Store.DB().Exec(`UPDATE users SET password_hash = $1 WHERE id = $2`, h, a.UserID); err != nil {
				t.Fatal(err)
			}
			env.Login(t, a.Email, "password123").Want(t, 200)
		})
	})
}
