package workspace_test

import (
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// emailInvitations lists org's pending email invitations as owner sees them.
func emailInvitations(t *testing.T, env *testenv.Env, token, org string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, inv := range env.Do(t, "GET", "/v1/orgs/"+org+"/invitations", token, nil).Want(t, 200).List(t, "invitations") {
		if inv["kind"] == "email" {
			out = append(out, inv)
		}
	}
	return out
}

// TestInvitationRenewAndResend (issue 30 item 4): inviting a pending
// address again renews its invitation (one stays, with the new role; the
// earlier link stops working); resending mails a new link and ends the
// old one; only email invitations of the org can be resent, by those who
// manage members; an address that is a member already is refused, by name.
func TestInvitationRenewAndResend(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		member := env.Join(t, owner, org, "member")
		p := "/v1/orgs/" + org + "/invitations"
		email := testenv.Email()
		first := env.Invite(t, owner.Token, org, email, "member")
		second := env.Invite(t, owner.Token, org, email, "admin")
		invs := emailInvitations(t, env, owner.Token, org)
		if len(invs) != 1 || invs[0]["role"] != "admin" {
			t.Fatalf("email invitations after inviting one address twice = %v; want one, admin", invs)
		}
		env.Call(t, "GET", "/v1/invitations/"+first, "", nil).Want(t, 410)
		env.Call(t, "GET", "/v1/invitations/"+second, "", nil).Want(t, 200)

		id := invs[0]["id"].(string)
		r := env.Call(t, "POST", p+"/"+id+"/resend", owner.Token, nil).Want(t, 200)
		third := testenv.InviteToken(t, r.Str("invitation.url"))
		if r.Str("invitation.id") == id || r.Str("invitation.role") != "admin" {
			t.Errorf("resent invitation = %s; want a new id, role admin", r.Body)
		}
		env.Call(t, "GET", "/v1/invitations/"+second, "", nil).Want(t, 410)
		env.Call(t, "GET", "/v1/invitations/"+third, "", nil).Want(t, 200)
		// Three mails, one per invitation, each with its own mailed
		// secret (never the inviter's URL); mail jobs run side by side,
		// so the resent one is among them rather than last, and it is
		// the one that still works.
		env.WaitMailToken(t, email, testenv.InviteLink, 3)
		var live []string
		for _, text := range env.MailTexts(email, testenv.InviteLink) {
			tok := testenv.TokenFromLink(t, text, testenv.InviteLink)
			if slices.Contains([]string{first, second, third}, tok) {
				t.Errorf("a mail carries the inviter's URL %s", tok)
			}
			if env.Call(t, "GET", "/v1/invitations/"+tok, "", nil).Status == 200 {
				live = append(live, tok)
			}
		}
		if len(live) != 1 {
			t.Errorf("mailed links that still work = %v; want the resent one only", live)
		}
		if n := len(emailInvitations(t, env, owner.Token, org)); n != 1 {
			t.Errorf("%d email invitations after a resend; want 1", n)
		}
		env.InviteByLink(t, owner.Token, org)
		var linkID string
		for _, inv := range env.Do(t, "GET", p, owner.Token, nil).Want(t, 200).List(t, "invitations") {
			if inv["kind"] == "link" {
				linkID = inv["id"].(string)
			}
		}
		newID := r.Str("invitation.id")
		env.RunCases(t, []testenv.Case{
			{Name: "resend the old id", Method: "POST", Path: p + "/" + id + "/resend", Token: owner.Token, Want: 404},
			{Name: "resend a link invitation", Method: "POST", Path: p + "/" + linkID + "/resend", Token: owner.Token, Want: 404},
			{Name: "resend unknown", Method: "POST", Path: p + "/00000000-0000-4000-8000-000000000000/resend", Token: owner.Token, Want: 404},
			{Name: "member resends", Method: "POST", Path: p + "/" + newID + "/resend", Token: member.Token, Want: 403},
			{Name: "invite a member", Method: "POST", Path: p, Token: owner.Token, Body: map[string]any{"emails": []string{member.Email}}, Want: 409,
				Check: testenv.ErrorNames(member.Email, "already a member")},
			{Name: "invite a member among others", Method: "POST", Path: p, Token: owner.Token,
				Body: map[string]any{"emails": []string{testenv.Email(), member.Email}}, Want: 409, Check: testenv.ErrorNames(member.Email)},
		})
		if n := len(emailInvitations(t, env, owner.Token, org)); n != 1 {
			t.Errorf("%d email invitations after the refusals; want 1", n)
		}
	})
}

// TestInvitationResendCounted: resends count against the invitation mail
// limits like new invitations (an unverified sender's ten a day).
func TestInvitationResendCounted(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		org := env.CreateOrg(t, a, "Resenders")
		p := "/v1/orgs/" + org + "/invitations"
		r := env.Do(t, "POST", p, a.Token, map[string]any{"emails": []string{testenv.Email()}}).Want(t, 200)
		id := r.List(t, "invitations")[0]["id"].(string)
		for i := range 9 {
			r := env.Call(t, "POST", p+"/"+id+"/resend", a.Token, nil)
			if r.Status != 200 {
				t.Fatalf("resend %d: %d %s; want 200 (10 mails a day)", i+1, r.Status, r.Body)
			}
			id = r.Str("invitation.id")
		}
		env.Call(t, "POST", p+"/"+id+"/resend", a.Token, nil).Want(t, 429)
	})
}
