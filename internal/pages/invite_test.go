package pages_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestInviteLanding covers the invitation page, GET and POST /invite,
// through the real accounts service: an invitation made through the API
// previews its org (escaped), a revoked one is gone, an anonymous accept
// goes to sign-in, and a signed-in accept joins the org.
func TestInviteLanding(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		if res := b.Do(t, "GET", "/invite?token=x", nil); res.Status != 404 {
			t.Fatalf("unknown token: status %d; want 404", res.Status)
		}
		owner := env.Register(t)
		org := env.CreateOrg(t, owner, "Acme <Team> "+testenv.RandomHex(3))
		good := env.InviteByLink(t, owner.Token, org)
		revoked := env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"emails": []string{testenv.Email()}}).Want(t, 200)
		inv := revoked.Get("invitations").([]any)[0].(map[string]any)
		env.Do(t, "DELETE", "/v1/orgs/"+org+"/invitations/"+inv["id"].(string), owner.Token, nil).Want(t, 200)

		res := b.Do(t, "GET", "/invite?token="+url.QueryEscape(good), nil)
		if res.Status != 200 || !strings.Contains(res.Body, "Acme &lt;Team&gt;") || !strings.Contains(res.Body, "Sign in to accept") {
			t.Fatalf("preview: %d %s", res.Status, res.Body)
		}
		if res := b.Do(t, "GET", "/invite?token="+url.QueryEscape(testenv.InviteToken(t, inv["url"].(string))), nil); res.Status != 410 {
			t.Fatalf("revoked: %d; want 410", res.Status)
		}
		if res := b.Do(t, "POST", "/invite", url.Values{"token": {good}}); res.Status != http.StatusSeeOther {
			t.Fatalf("anonymous accept: %d; want a sign-in redirect", res.Status)
		}
		a := env.Register(t)
		b.Do(t, "POST", "/signin", url.Values{"email": {a.Email}, "password": {a.Password}})
		if res := b.Do(t, "GET", "/invite?token="+url.QueryEscape(good), nil); !strings.Contains(res.Body, "Accept the invitation") {
			t.Fatalf("signed-in preview lacks the accept button: %s", res.Body)
		}
		res = b.Do(t, "POST", "/invite", url.Values{"token": {good}})
		if res.Status != http.StatusSeeOther || res.Location() != "/account/workspaces?done=joined" {
			t.Fatalf("accept: %d %q; want 303 to the workspaces page", res.Status, res.Location())
		}
		if res := b.Get(t, res.Location()); res.Status != 200 || !strings.Contains(res.Body, "You joined the workspace.") || !strings.Contains(res.Body, "Acme &lt;Team&gt;") {
			t.Fatalf("landing after accepting: %d %s", res.Status, res.Body)
		}
		if role := env.MemberRoles(t, owner.Token, org)[a.UserID]; role != "member" {
			t.Fatalf("after accepting, the user's role in the org is %q; want member", role)
		}
	})
}

// TestInviteSignUpWaysBack: a person who follows "Create an account" from
// an invitation but already has an account is sent to sign in by the
// sign-up page (its aside, and the message of a taken address); every such
// link keeps the invitation, so signing in there lands back on it instead
// of on the console with the invitation lost.
func TestInviteSignUpWaysBack(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, a := env.Register(t), env.Register(t)
		invite := "/invite?token=" + url.QueryEscape(env.InviteByLink(t, owner.Token, env.CreateOrg(t, owner, "Ways Back")))
		b := env.NewBrowser(t)
		signup := hrefs(b.Get(t, invite), "/signup")
		if len(signup) != 1 {
			t.Fatalf("the invitation links to sign-up %q; want one link", signup)
		}
		page := b.Get(t, signup[0])
		taken := b.Post(t, "/signup", url.Values{"next": {invite}, "email": {a.Email}, "password": {"another passphrase"}})
		wantPage(t, "taken address", taken, http.StatusConflict, "An account with this email address already exists.")
		for what, p := range map[string]*testenv.Page{"sign-up page": page, "taken address": taken} {
			links := hrefs(p, "/signin")
			if len(links) == 0 {
				t.Fatalf("%s: no sign-in link", what)
			}
			for _, l := range links {
				signin := b.Get(t, l)
				wantPage(t, what+": "+l, signin, http.StatusOK, `name="next" value="`+html.EscapeString(invite)+`"`)
			}
		}
		res := b.Post(t, "/signin", url.Values{"next": {invite}, "email": {a.Email}, "password": {a.Password}})
		wantRedirect(t, "sign-in", res, invite)
	})
}

// hrefs are the links of p's page to path (with or without a query),
// unescaped.
func hrefs(p *testenv.Page, path string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(p.Body, -1) {
		if l := html.UnescapeString(m[1]); l == path || strings.HasPrefix(l, path+"?") {
			out = append(out, l)
		}
	}
	return out
}
