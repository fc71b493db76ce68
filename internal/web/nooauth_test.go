package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
	"github.com/gatehouse/gatehouse/internal/web"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// TestWithoutOAuth: a server without an authorization server still serves
// the tool APIs (their 401 without the resource metadata pointer it would
// not serve) and the sign-in page, and leaves out the OAuth endpoints.
func TestWithoutOAuth(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		k := web.NewServer(web.Config{Auth: env.Svc})
		tasks.Mount(k.Mux(), k, tasks.New(env.SQL.Tasks(), env.Clock.Now))
		pages.Mount(k.Mux(), k, pages.Deps{Identity: env.Svc})
		k.ToolFallbacks(workspace.Tools)
		srv := httptest.NewServer(k)
		defer srv.Close()
		get := func(path, bearer string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res
		}
		if res := get("/tasks/v1/issues", ""); res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("tool API without a token: %d, WWW-Authenticate %q; want 401, Bearer", res.StatusCode, res.Header.Get("WWW-Authenticate"))
		}
		if res := get("/tasks/v1/issues", env.Register(t).Access); res.StatusCode != 200 {
			t.Errorf("tool API with a token: %d; want 200", res.StatusCode)
		}
		if res := get("/signin", ""); res.StatusCode != 200 {
			t.Errorf("sign-in page: %d; want 200", res.StatusCode)
		}
		if res := get("/.well-known/oauth-authorization-server", ""); res.StatusCode != 404 {
			t.Errorf("OAuth metadata: %d; want 404", res.StatusCode)
		}
	})
}
