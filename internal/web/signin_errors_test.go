package web_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func TestSigninErrors(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		allow := func(method string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				if got := r.Header.Get("Allow"); !strings.Contains(got, method) {
					t.Errorf("Allow = %q; want it to list %s", got, method)
				}
			}
		}
		big := `{"email": "big@example.com", "password": "password-1", "name": "` + strings.Repeat("x", 1<<20) + `"}`
		bigLogin := `{"email": "big@example.com", "password": "` + strings.Repeat("x", 1<<20) + `"}`
		runSigninCases(t, env, []signinCase{
			{name: "unknown route", method: "GET", path: "/nope", wantStatus: 404},
			{name: "unknown route under /v1/auth", method: "POST", path: "/v1/auth/nope", body: map[string]string{}, wantStatus: 404},
			{name: "route with a trailing slash", method: "POST", path: "/v1/auth/login/", body: map[string]string{}, wantStatus: 404},
			{name: "GET on login", method: "GET", path: "/v1/auth/login", wantStatus: 405, wantBody: allow("POST")},
			{name: "PUT on register", method: "PUT", path: "/v1/auth/register", body: map[string]string{}, wantStatus: 405, wantBody: allow("POST")},
			{name: "DELETE on health", method: "DELETE", path: "/health", wantStatus: 405, wantBody: allow("GET")},
			{name: "POST on me", method: "POST", path: "/v1/auth/me", wantStatus: 405, wantBody: allow("GET")},
			{name: "register body over 1 MiB", method: "POST", path: "/v1/auth/register", body: big, wantStatus: 413},
			{name: "login body over 1 MiB", method: "POST", path: "/v1/auth/login", body: bigLogin, wantStatus: 413},
			{name: "magic-link body over 1 MiB", method: "POST", path: "/v1/auth/magic-link", body: big, wantStatus: 413},
			{name: "login body of exactly 1 MiB is read", method: "POST", path: "/v1/auth/login", body: signinLoginBodyOf(1 << 20), wantStatus: 401},
			{name: "login body of 1 MiB and 1 byte", method: "POST", path: "/v1/auth/login", body: signinLoginBodyOf(1<<20 + 1), wantStatus: 413},
		})
		t.Run("oversized register created no account", func(t *testing.T) {
			signinLogin(t, env, "big@example.com", "password-1").Want(t, 401)
		})
		t.Run("request ids differ", func(t *testing.T) {
			r1 := signinCall(t, env, "GET", "/health", "", nil)
			r2 := signinCall(t, env, "GET", "/health", "", nil)
			if id1, id2 := r1.Header.Get("X-Request-Id"), r2.Header.Get("X-Request-Id"); id1 == id2 {
				t.Errorf("two requests share X-Request-Id %q", id1)
			}
		})
	})
}

// signinLoginBodyOf returns a login body of exactly n bytes: an unknown
// address and a long password, so a body that is read answers 401.
func signinLoginBodyOf(n int) string {
	head := `{"email": "` + testenv.Email() + `", "password": "`
	tail := `"}`
	return head + strings.Repeat("y", n-len(head)-len(tail)) + tail
}

// TestNulCharactersRefused checks that a NUL character or invalid UTF-8,
// which PostgreSQL text cannot hold, answers 400 in a JSON body or a query,
// never 500.
func TestNulCharactersRefused(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		env.Do(t, "POST", "/v1/auth/register", "", `{"email":"`+testenv.Email()+`","password":"password-1","name":"a\u0000b"}`).Want(t, 400)
		env.Do(t, "PATCH", "/v1/me", a.Access, `{"name":"x\u0000y"}`).Want(t, 400)
		env.Do(t, "POST", "/v1/orgs", a.Access, `{"name":"x\u0000y"}`).Want(t, 400)
		env.Do(t, "GET", "/v1/orgs/"+a.OrgID+"/audit?tool=a%00b", a.Access, nil).Want(t, 400)
		env.Do(t, "GET", "/v1/orgs/"+a.OrgID+"/audit?tool=%ff", a.Access, nil).Want(t, 400) // not UTF-8
		env.Do(t, "PATCH", "/v1/me", a.Access, `{"name":"back\\u0000slash"}`).Want(t, 200)  // an escaped backslash, not a NUL
	})
}
