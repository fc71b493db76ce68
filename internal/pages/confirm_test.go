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

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// TestConfirmStep: each change that cannot be undone (revoking a key or a
// session, leaving a workspace, removing a member, deleting a team or a
// domain claim) answers its list's post with a page naming the thing and
// changes nothing: a post that skips the step does no harm. The page's
// own form makes the change, and the notice after it names the thing.
// The confirmation's post from another site is refused.
func TestConfirmStep(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		ob := signedIn(t, env, owner)
		member := env.Join(t, owner, org, "member")
		mb := signedIn(t, env, member)
		leaver := env.Join(t, owner, org, "member")
		lb := signedIn(t, env, leaver)
		key := env.Do(t, "POST", "/v1/me/api-keys", owner.Access, map[string]any{"name": "nightly backup"}).Want(t, 200).Str("api_key.id")
		otherSession, _ := env.NewSession(t, owner)
		team := env.Do(t, "POST", "/v1/orgs/"+org+"/teams", owner.Token, map[string]any{"name": "Night shift"}).Want(t, 200).Str("team.id")
		domain := env.ClaimDomain(t, owner.Token, org, "confirm-"+testenv.RandomHex(3)+".example", "")["id"].(string)
		orgName := env.Do(t, "GET", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200).Str("org.name")
		ws := "/workspaces/" + org

		for _, tc := range []struct {
			name       string
			b          *testenv.Browser
			path       string
			form       url.Values
			says       string // on the confirmation page
			back       string // where the change redirects
			notice     string
			stillThere func() bool
		}{
			{"revoke a key", ob, "/account/keys/revoke", url.Values{"id": {key}}, "Revoke the API key “nightly backup”?",
				"/account/keys?done=key-revoked", "The API key “nightly backup” was revoked",
				func() bool {
					return len(env.Do(t, "GET", "/v1/me/api-keys", owner.Access, nil).Want(t, 200).List(t, "api_keys")) == 1
				}},
			{"sign out a session", ob, "/account/sessions/revoke", url.Values{"id": {testenv.SID(t, otherSession)}}, "Sign out the session on",
				"/account/sessions?done=revoked", "was signed out.",
				func() bool { return env.Call(t, "GET", "/v1/auth/me", otherSession, nil).Status == http.StatusOK }},
			{"remove a member", ob, ws + "/members/remove", url.Values{"user_id": {member.UserID}}, "Remove Test User (" + member.Email + ")?",
				ws + "/members?done=removed", "Test User (" + member.Email + ") was removed from the workspace.",
				func() bool { return env.Role(t, org, member.UserID) != "" }},
			{"leave a workspace", lb, "/account/workspaces/leave", url.Values{"org_id": {org}}, "Leave " + orgName + "?",
				"/account/workspaces?done=left", "You left " + orgName + ".",
				func() bool { return env.Role(t, org, leaver.UserID) != "" }},
			{"delete a team", ob, ws + "/teams/delete", url.Values{"team_id": {team}}, "Delete the team “Night shift”?",
				ws + "/teams?done=team-deleted", "The team “Night shift” was deleted.",
				func() bool {
					return strings.Contains(string(env.Do(t, "GET", "/v1/orgs/"+org+"/teams", owner.Token, nil).Want(t, 200).Body), team)
				}},
			{"delete a domain claim", ob, ws + "/domains/delete", url.Values{"domain_id": {domain}}, "Delete the claim of confirm-",
				ws + "/domains?done=domain-delete", "The claim of confirm-",
				func() bool {
					return len(env.Do(t, "GET", "/v1/orgs/"+org+"/domains", owner.Token, nil).Want(t, 200).List(t, "domains")) == 1
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := tc.b.Post(t, tc.path, tc.form)
				wantPage(t, "without the step", res, 200, html.EscapeString(tc.says), `name="confirm" value="yes"`, `action="`+tc.path+`"`)
				if !tc.stillThere() {
					t.Fatalf("a post without the confirmation step made the change")
				}
				form := url.Values{"confirm": {"yes"}}
				for _, m := range hiddenField.FindAllStringSubmatch(res.Body, -1) {
					form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
				}
				if tc.name == "revoke a key" {
					wantPage(t, "cross-site confirmation", tc.b.PostCrossSite(t, tc.path, form), 403)
					if !tc.stillThere() {
						t.Fatalf("a cross-site confirmation made the change")
					}
				}
				done := tc.b.Post(t, tc.path, form)
				wantRedirect(t, "confirmed", done, tc.back)
				if tc.stillThere() {
					t.Fatalf("the confirmed change was not made")
				}
				wantPage(t, "notice", tc.b.Get(t, done.Location()), 200, html.EscapeString(tc.notice))
			})
		}
		_ = mb
	})
}
