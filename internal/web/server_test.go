package web_test

import (
	"net/http"
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
		env.RunCases(t, []testenv.Case{
			{Name: "unknown route", Method: "GET", Path: "/nope", Want: 404},
			{Name: "unknown route under /v1/auth", Method: "POST", Path: "/v1/auth/nope", Body: map[string]string{}, Want: 404},
			{Name: "route with a trailing slash", Method: "POST", Path: "/v1/auth/login/", Body: map[string]string{}, Want: 404},
			{Name: "GET on login", Method: "GET", Path: "/v1/auth/login", Want: 405, Check: allow("POST")},
			{Name: "PUT on register", Method: "PUT", Path: "/v1/auth/register", Body: map[string]string{}, Want: 405, Check: allow("POST")},
			{Name: "DELETE on health", Method: "DELETE", Path: "/health", Want: 405, Check: allow("GET")},
			{Name: "POST on me", Method: "POST", Path: "/v1/auth/me", Want: 405, Check: allow("GET")},
			{Name: "register body over 1 MiB", Method: "POST", Path: "/v1/auth/register", Body: big, Want: 413},
			{Name: "login body over 1 MiB", Method: "POST", Path: "/v1/auth/login", Body: bigLogin, Want: 413},
			{Name: "magic-link body over 1 MiB", Method: "POST", Path: "/v1/auth/magic-link", Body: big, Want: 413},
			{Name: "login body of exactly 1 MiB is read", Method: "POST", Path: "/v1/auth/login", Body: loginBodyOf(1 << 20), Want: 401},
			{Name: "login body of 1 MiB and 1 byte", Method: "POST", Path: "/v1/auth/login", Body: loginBodyOf(1<<20 + 1), Want: 413},
		})
		t.Run("oversized register created no account", func(t *testing.T) {
			env.Login(t, "big@example.com", "password-1").Want(t, 401)
		})
		t.Run("request ids differ", func(t *testing.T) {
			r1 := env.Call(t, "GET", "/health", "", nil)
			r2 := env.Call(t, "GET", "/health", "", nil)
			if id1, id2 := r1.Header.Get("X-Request-Id"), r2.Header.Get("X-Request-Id"); id1 == id2 {
				t.Errorf("two requests share X-Request-Id %q", id1)
			}
		})
	})
}

// loginBodyOf returns a login body of exactly n bytes: an unknown
// address and a long password, so a body that is read answers 401.
func loginBodyOf(n int) string {
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

// TestOddClientInput checks inputs that reached PostgreSQL as invalid text
// or raced a delete: a User-Agent that is not UTF-8 still signs in, OAuth
// parameters with NUL are invalid_request, and long inputs are not echoed
// back whole.
func TestOddClientInput(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		body := `{"email":"` + a.Email + `","password":"` + a.Password + `"}`
		req, err := http.NewRequest("POST", env.URL+"/v1/auth/login", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "agent \xff\xfe "+strings.Repeat("x", 2000))
		res, err := env.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("login with a non-UTF-8 User-Agent: %d; want 200", res.StatusCode)
		}

		for _, path := range []string{"/oauth/token", "/oauth/device/authorization"} {
			res, err := env.Client.PostForm(env.URL+path, map[string][]string{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"a\x00b"}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 400 {
				t.Errorf("POST %s with a NUL client_id: %d; want 400", path, res.StatusCode)
			}
		}
		env.Do(t, "POST", "/oauth/register", "", `{"client_name":"a\u0000b","redirect_uris":["https://app.example.com/cb"]}`).Want(t, 400)

		long := strings.Repeat("a", 100_000) + ".example.com"
		r := env.Do(t, "POST", "/v1/orgs", a.Access, map[string]string{"name": "Long Org"}).Want(t, 200)
		if e := env.Do(t, "POST", "/v1/orgs/"+r.Str("org.id")+"/domains", r.Str("access_token"), map[string]string{"domain": long}).Want(t, 400); len(e.Body) > 1024 {
			t.Errorf("error body of %d bytes for a long domain; want it clipped", len(e.Body))
		}
	})
}
