package pages_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSecurityActivity (issue 30 item 6): the account page links to the
// security activity page, which lists the account's sign-ins (method,
// device, address) and security changes newest first, a page at a time,
// and never another person's, nor a workspace key the person made.
func TestSecurityActivity(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, other := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Activity", [2]string{a.UserID, "owner"}, [2]string{other.UserID, "admin"})
		ab := signedIn(t, env, a)
		wantPage(t, "account", ab.Get(t, "/account"), 200, `href="/account/activity"`)

		env.Call(t, "POST", "/v1/me/api-keys", a.Access, map[string]any{"name": "laptop"}).Want(t, 200)
		env.Call(t, "POST", "/v1/orgs/"+org+"/api-keys", a.Access, map[string]any{"name": "workspace-robot", "role": "member"}).Want(t, 200)
		env.Call(t, "POST", "/v1/me/password", a.Access, map[string]string{"current_password": a.Password, "new_password": a.Password + "-2"}).Want(t, 200)
		a.Password += "-2"
		if res := env.NewBrowser(t).Post(t, "/signin", url.Values{"email": {a.Email}, "password": {"not-the-password"}}); res.Status == 303 {
			t.Fatalf("a wrong password signed in")
		}
		env.Svc.Wait()
		ab = signedIn(t, env, a)
		// The other person's doings: none may show on a's page.
		env.Call(t, "POST", "/v1/me/api-keys", other.Access, map[string]any{"name": "other-persons-key"}).Want(t, 200)
		env.Call(t, "POST", "/v1/me/password", other.Access, map[string]string{"current_password": other.Password, "new_password": other.Password + "-x"}).Want(t, 200)
		signedIn(t, env, &testenv.Account{Email: other.Email, Password: other.Password + "-x"})

		res := ab.Get(t, "/account/activity")
		wantPage(t, "activity", res, 200, `"item-title">Signed in<`, "with password", `"item-title">Password changed<`,
			`"item-title">API key created</span> <span class="muted">“laptop”`, `"item-title">Sign-in refused: wrong password<`,
			`<span class="badge">refused</span>`, "127.0.0.1")
		if strings.Contains(res.Body, "Unknown device") {
			t.Errorf("a sign-in, taken or refused, lacks its device")
		}
		// The page's main part: its header lists a's own workspaces, whose
		// personal one bears a's name, which other's may share.
		main := res.Body[strings.Index(res.Body, "<main"):]
		for _, leak := range []string{"other-persons-key", "workspace-robot", other.Email, other.Name} {
			if strings.Contains(main, leak) {
				t.Errorf("a's activity shows %q", leak)
			}
		}
		if n := strings.Count(res.Body, `"item-title">Password changed<`); n != 1 {
			t.Errorf("a's activity shows %d password changes; want 1 (a's own)", n)
		}
		if i, j := strings.Index(res.Body, `"item-title">Password changed<`), strings.Index(res.Body, `"item-title">API key created<`); i > j {
			t.Errorf("the activity is not newest first")
		}

		// Pages: 30 more sign-ins make two pages; the second carries on
		// where the first ended, with no entry twice.
		base := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
		for i := range 30 {
			env.Exec(t, `INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES ($1, $2, 'identity', 'identity.user.signed_in', $3, 'user', $3, $4, $5)`,
				fmt.Sprintf("00000000-0000-4000-8000-%012d", i), a.OrgID, a.UserID,
				fmt.Sprintf(`{"method":"passkey","ip":"198.51.100.%d","user_agent":"Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"}`, i), base.Add(-time.Duration(i)*time.Minute).UnixMicro())
		}
		first := ab.Get(t, "/account/activity")
		next := regexp.MustCompile(`href="/account/activity\?before=([^"]+)">Older<`).FindStringSubmatch(first.Body)
		if next == nil || strings.Count(first.Body, `class="row"`) != 25 {
			t.Fatalf("first page: %d rows, next %v", strings.Count(first.Body, `class="row"`), next)
		}
		second := ab.Get(t, "/account/activity?before="+next[1])
		wantPage(t, "second page", second, 200, "Firefox on Linux", "with a passkey", "198.51.100.29", `href="/account/activity">Newest<`)
		for i := range 30 {
			ip := fmt.Sprintf("198.51.100.%d<", i)
			if n := strings.Count(first.Body, ip) + strings.Count(second.Body, ip); n != 1 {
				t.Errorf("sign-in from %s shown %d times over the two pages", ip, n)
			}
		}
		wantPage(t, "bad cursor", ab.Get(t, "/account/activity?before=x"), 400)
		if res := env.NewBrowser(t).Get(t, "/account/activity"); res.Status != 303 && res.Status != 302 {
			t.Fatalf("anonymous: %d; want a redirect to sign in", res.Status)
		}
	})
}
