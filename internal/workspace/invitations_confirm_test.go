package workspace_test

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// verifiedByInvitation counts the entries of a's personal workspace that
// say an invitation confirmed their address.
func verifiedByInvitation(t *testing.T, env *testenv.Env, a *testenv.Account) int {
	t.Helper()
	n := 0
	for _, e := range env.Audit(t, a.Access, a.OrgID, "action=identity.user.email_verified") {
		var m map[string]any
		if meta, _ := e["meta"].(string); json.Unmarshal([]byte(meta), &m) == nil && m["via"] == "invitation" {
			n++
		}
	}
	return n
}

// meVerified is GET /v1/auth/me's email_verified for a.
func meVerified(t *testing.T, env *testenv.Env, a *testenv.Account) any {
	t.Helper()
	return env.Do(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200).Get("user.email_verified")
}

// accept accepts invitation secret as a and returns the answer.
func accept(t *testing.T, env *testenv.Env, a *testenv.Account, secret string, want int) *testenv.Resp {
	t.Helper()
	return env.Call(t, "POST", "/v1/invitations/"+secret+"/accept", a.Access, nil).Want(t, want)
}

// TestInvitationMailedLinkConfirms (issue 30 item 4): an email invitation
// accepted with the link mailed to its address confirms that address (at
// once on GET /v1/auth/me, with an entry in the personal workspace); the
// URL the inviter holds accepts but confirms nothing, so an inviter who
// signed someone else's address up cannot confirm it by inviting it.
func TestInvitationMailedLinkConfirms(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)

		t.Run("mailed link", func(t *testing.T) {
			u := env.Register(t)
			if got := meVerified(t, env, u); got != false {
				t.Fatalf("a new account's email_verified = %v; want false", got)
			}
			env.Invite(t, owner.Token, org, u.Email, "member")
			r := accept(t, env, u, env.MailToken(t, u.Email, testenv.InviteLink), 200)
			if r.Get("email_verified") != true || r.Get("already_member") != false {
				t.Errorf("accept with the mailed link answered %s; want email_verified true", r.Body)
			}
			if got := meVerified(t, env, u); got != true {
				t.Errorf("email_verified on /me right after the accept = %v; want true", got)
			}
			if n := verifiedByInvitation(t, env, u); n != 1 {
				t.Errorf("%d user.email_verified entries via invitation; want 1", n)
			}
		})

		t.Run("inviter's URL", func(t *testing.T) {
			u := env.Register(t)
			r := accept(t, env, u, env.Invite(t, owner.Token, org, u.Email, "member"), 200)
			if r.Get("email_verified") != false {
				t.Errorf("accept with the inviter's URL answered %s; want email_verified false", r.Body)
			}
			if got := meVerified(t, env, u); got != false {
				t.Errorf("email_verified after accepting the inviter's URL = %v; want false", got)
			}
			// The mailed link of the invitation now used confirms nothing.
			r = accept(t, env, u, env.MailToken(t, u.Email, testenv.InviteLink), 200)
			if r.Get("email_verified") != false || r.Get("already_member") != true {
				t.Errorf("the used invitation's mailed link answered %s; want already_member, email_verified false", r.Body)
			}
			if got, n := meVerified(t, env, u), verifiedByInvitation(t, env, u); got != false || n != 0 {
				t.Errorf("after a used invitation's mailed link: email_verified %v, %d entries; want false, 0", got, n)
			}
		})

		t.Run("inviter signs the victim up", func(t *testing.T) {
			// The attacker registers the victim's address (unconfirmed)
			// and invites it from their own workspace: they hold the URL,
			// the victim's mailbox holds the mailed link.
			attacker, attackOrg := env.Team(t)
			victim := env.Register(t)
			r := accept(t, env, victim, env.Invite(t, attacker.Token, attackOrg, victim.Email, "member"), 200)
			if r.Get("email_verified") != false {
				t.Errorf("the attacker's accept answered %s; want email_verified false", r.Body)
			}
			if got, n := meVerified(t, env, victim), verifiedByInvitation(t, env, victim); got != false || n != 0 {
				t.Errorf("the squatted address: email_verified %v, %d entries; want false, 0", got, n)
			}
		})

		t.Run("another address", func(t *testing.T) {
			invitee, other := env.Register(t), env.Register(t)
			env.Invite(t, owner.Token, org, invitee.Email, "member")
			accept(t, env, other, env.MailToken(t, invitee.Email, testenv.InviteLink), 403)
			if got := meVerified(t, env, other); got != false {
				t.Errorf("email_verified of the refused account = %v; want false", got)
			}
		})

		t.Run("resent", func(t *testing.T) {
			u := env.Register(t)
			env.Invite(t, owner.Token, org, u.Email, "member")
			old := env.MailToken(t, u.Email, testenv.InviteLink)
			id := emailInvitationID(t, env, owner.Token, org, u.Email)
			env.Do(t, "POST", "/v1/orgs/"+org+"/invitations/"+id+"/resend", owner.Token, nil).Want(t, 200)
			accept(t, env, u, old, 410)
			if got, n := meVerified(t, env, u), verifiedByInvitation(t, env, u); got != false || n != 0 {
				t.Errorf("after a renewed invitation's old link: email_verified %v, %d entries; want false, 0", got, n)
			}
		})

		t.Run("verified already", func(t *testing.T) {
			u := env.Register(t)
			env.VerifyEmail(t, u)
			env.Invite(t, owner.Token, org, u.Email, "member")
			r := accept(t, env, u, env.MailToken(t, u.Email, testenv.InviteLink), 200)
			if r.Get("email_verified") != false {
				t.Errorf("a verified account's accept answered %s; want email_verified false (nothing changed)", r.Body)
			}
			if n := verifiedByInvitation(t, env, u); n != 0 {
				t.Errorf("%d user.email_verified entries via invitation for a verified account; want 0", n)
			}
		})
	})
}

// emailInvitationID is the id of org's pending invitation to email.
func emailInvitationID(t *testing.T, env *testenv.Env, token, org, email string) string {
	t.Helper()
	for _, inv := range emailInvitations(t, env, token, org) {
		if inv["email"] == email {
			return inv["id"].(string)
		}
	}
	t.Fatalf("no pending invitation to %s", email)
	return ""
}
