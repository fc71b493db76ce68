package pages_test

import (
	"html"
	"net/url"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestInvitationsResendPage (issue 30 item 4): the invitations page sends
// an email invitation again (a new link; the notice names the address),
// refuses a member's address next to the field by name, and a cross-site
// resend is refused.
func TestInvitationsResendPage(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		ob := signedIn(t, env, owner)
		path := "/workspaces/" + org + "/invitations"
		email := testenv.Email()
		first := env.Invite(t, owner.Token, org, email, "member")
		res := ob.Get(t, path)
		wantPage(t, "list", res, 200, `aria-label="Send again to `+email+`"`)
		id := regexpFirst(t, res.Body, `name="invitation_id" value="([^"]+)"`)

		wantPage(t, "cross-site resend", ob.PostCrossSite(t, path+"/resend", url.Values{"invitation_id": {id}}), 403)
		env.Call(t, "GET", "/v1/invitations/"+first, "", nil).Want(t, 200)

		done := ob.Post(t, path+"/resend", url.Values{"invitation_id": {id}})
		wantRedirect(t, "resend", done, path+"?done=invitation-resent")
		wantPage(t, "notice", ob.Get(t, done.Location()), 200, html.EscapeString("A new invitation link went to "+email+"; the earlier one no longer works."))
		env.Call(t, "GET", "/v1/invitations/"+first, "", nil).Want(t, 410)
		// The two mails are sent by jobs, in either order: the new link is
		// the one that still works (each mail has its own secret).
		env.WaitMailToken(t, email, testenv.InviteLink, 2)
		live := 0
		for _, text := range env.MailTexts(email, testenv.InviteLink) {
			if env.Call(t, "GET", "/v1/invitations/"+testenv.TokenFromLink(t, text, testenv.InviteLink), "", nil).Status == 200 {
				live++
			}
		}
		if live != 1 {
			t.Errorf("%d mailed links work after a resend; want 1, the new one", live)
		}

		wantPage(t, "invite a member", ob.Post(t, path, url.Values{"emails": {member.Email}, "role": {"member"}}), 409,
			`id="emails-error">`, member.Email[1:]+` is already a member of this workspace.`)
	})
}
