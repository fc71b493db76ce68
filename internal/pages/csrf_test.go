package pages_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// pathValue is a wildcard of a route pattern ("{id}", "{action}").
var pathValue = regexp.MustCompile(`\{[^}]+\}`)

// TestEveryFormRefusesCrossSite (issue 30, CSRF on every new form): every
// POST route of the pages, read from the server's own list of page routes
// (so a form added later is covered without editing this test), refuses a
// signed-in browser's cross-site post with 403 "Request refused" before
// its handler runs. The one exception is the OpenID logout endpoint,
// which a relying party may POST to by design (RP-Initiated Logout 1.0
// §2): it only shows the confirmation, whose own post is refused here.
func TestEveryFormRefusesCrossSite(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		b := signedIn(t, env, owner)
		posts := 0
		for _, pattern := range env.PagePatterns() {
			path, ok := strings.CutPrefix(pattern, "POST ")
			if !ok {
				continue
			}
			posts++
			path = pathValue.ReplaceAllStringFunc(path, func(w string) string {
				if w == "{id}" {
					return org
				}
				return "x"
			})
			res := b.PostCrossSite(t, path, nil)
			if path == "/oauth/logout" {
				if res.Status == http.StatusForbidden {
					t.Errorf("POST %s from another site: 403; a relying party may post here", path)
				}
				continue
			}
			if res.Status != http.StatusForbidden || !strings.Contains(res.Body, "Request refused") {
				t.Errorf("POST %s from another site: %d; want 403 Request refused\n%.300s", path, res.Status, res.Body)
			}
		}
		if posts < 60 {
			t.Fatalf("%d POST page routes; the server's list looks incomplete", posts)
		}
		t.Logf("%d POST page routes", posts)
		wantPage(t, "still signed in, the workspace still there", b.Get(t, "/workspaces/"+org), 200, "Overview")
	})
}
