package pages_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

var shownLink = regexp.MustCompile(`<code id="new-link" class="secret-value">([^<]+)</code>`)

// TestConsoleInvitations: invite by email (refused addresses kept next to
// the field, the valid ones sent), a link shown once that works, revoke;
// a role without the members permission gets 403 on the page and on a
// forged post, which changes nothing.
func TestConsoleInvitations(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, member := env.Register(t), env.Register(t)
		org := env.TeamOrg(t, "Guild", [2]string{owner.UserID, "owner"}, [2]string{member.UserID, "member"})
		path := "/workspaces/" + org + "/invitations"
		ob, mb := signedIn(t, env, owner), signedIn(t, env, member)
		wantPage(t, "member", mb.Get(t, path), 403)
		wantPage(t, "owner", ob.Get(t, path), 200, "No open invitations.")

		a, b := testenv.Email(), testenv.Email()
		res := ob.Post(t, path, url.Values{"emails": {a + ",\n" + b + ", not-an-address"}, "role": {"admin"}})
		wantPage(t, "one bad address", res, 400, `id="emails-error"`, ">not-an-address</textarea>", `<option value="admin" selected>`)
		tokA := env.MailToken(t, a, testenv.InviteLink)
		env.MailToken(t, b, testenv.InviteLink)
		wantPage(t, "none valid", ob.Post(t, path, url.Values{"emails": {"nope"}}), 400, ">nope</textarea>")
		wantRedirect(t, "one more", ob.Post(t, path, url.Values{"emails": {testenv.Email()}}), path+"?done=invited")

		wantRedirect(t, "link", ob.Post(t, path, url.Values{"kind": {"link"}}), path)
		page := ob.Get(t, path)
		m := shownLink.FindStringSubmatch(page.Body)
		if m == nil || !strings.HasPrefix(m[1], testenv.InviteLink) {
			t.Fatalf("no link shown:\n%s", page.Body)
		}
		wantPage(t, "listed", page, 200, a, b, "Invitation link", "no expiry")
		if again := ob.Get(t, path); strings.Contains(again.Body, m[1]) {
			t.Fatalf("the link is shown a second time")
		}
		preview := env.NewBrowser(t).Get(t, "/invite?token="+url.QueryEscape(testenv.InviteToken(t, m[1])))
		wantPage(t, "the link works", preview, 200, "Guild")

		ids := regexp.MustCompile(`/invitations/revoke">\n<input type="hidden" name="invitation_id" value="([0-9a-f-]{36})"`).FindAllStringSubmatch(page.Body, -1)
		if len(ids) != 4 {
			t.Fatalf("%d invitations listed; want 4", len(ids))
		}
		wantPage(t, "member revokes", mb.Post(t, path+"/revoke", url.Values{"invitation_id": {ids[0][1]}}), 403)
		wantPage(t, "member invites", mb.Post(t, path, url.Values{"kind": {"link"}}), 403)
		if n := len(regexp.MustCompile(`/invitations/revoke">`).FindAllString(ob.Get(t, path).Body, -1)); n != 4 {
			t.Fatalf("after refused posts %d invitations; want 4", n)
		}
		wantRedirect(t, "revoke", ob.Post(t, path+"/revoke", url.Values{"invitation_id": {ids[0][1]}}), path+"?done=invitation-revoked")
		if strings.Contains(ob.Get(t, path).Body, ids[0][1]) {
			t.Fatalf("a revoked invitation is still listed")
		}

		// Only usable invitations are listed: not an accepted one, not expired ones.
		ab := env.NewBrowser(t)
		wantRedirect(t, "a signs up", ab.Post(t, "/signup", url.Values{"email": {a}, "password": {"an invited passphrase"}}), "/")
		// tokA is the mailed link's: a's new, unverified address is confirmed by the accept.
		wantRedirect(t, "a accepts", ab.Post(t, "/invite", url.Values{"token": {tokA}}), "/account/workspaces?done=joined-confirmed")
		if res := ob.Get(t, path); strings.Contains(res.Body, a) || !strings.Contains(res.Body, b) {
			t.Fatalf("after %s accepted, the list is wrong:\n%s", a, res.Body)
		}
		env.Clock.Advance(15 * 24 * time.Hour)
		wantPage(t, "expired", ob.Get(t, path), 200, "No open invitations.")
	})
}

// TestSignUpFromInvitation: an invitation page for someone without an
// account offers sign-up, which comes back to the invitation to accept it.
func TestSignUpFromInvitation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.TeamOrg(t, "Welcome Team", [2]string{owner.UserID, "owner"})
		ob := signedIn(t, env, owner)
		wantRedirect(t, "link", ob.Post(t, "/workspaces/"+org+"/invitations", url.Values{"kind": {"link"}}), "/workspaces/"+org+"/invitations")
		m := shownLink.FindStringSubmatch(ob.Get(t, "/workspaces/"+org+"/invitations").Body)
		invite := "/invite?token=" + url.QueryEscape(testenv.InviteToken(t, m[1]))
		b := env.NewBrowser(t)
		page := b.Get(t, invite)
		signup := "/signup?" + url.Values{"next": {invite}}.Encode()
		wantPage(t, "invitation", page, 200, "Create an account", `href="`+strings.ReplaceAll(signup, "&", "&amp;")+`"`)
		wantPage(t, "sign-up page", b.Get(t, signup), 200, `name="next" value="`+strings.ReplaceAll(invite, "&", "&amp;"))
		res := b.Post(t, "/signup", url.Values{"email": {testenv.Email()}, "password": {"a welcome passphrase"}, "next": {invite}})
		wantRedirect(t, "sign-up", res, invite)
		wantPage(t, "back on the invitation", b.Get(t, invite), 200, "Accept the invitation")
	})
}
