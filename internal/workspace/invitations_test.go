package workspace_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestCreateInvitations covers POST /v1/orgs/{id}/invitations.
func TestCreateInvitations(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		p := "/v1/orgs/" + org + "/invitations"
		env.RunCases(t, []testenv.Case{
			{Name: "no token", Method: "POST", Path: p, Body: map[string]any{"emails": []string{"a@example.com"}}, Want: 401},
			{Name: "key token", Method: "POST", Path: p, Body: map[string]any{"emails": []string{"a@example.com"}}, Token: env.ForgeKeyToken(t, owner.Token, org, "owner"), Want: 403},
			{Name: "emails missing", Method: "POST", Path: p, Body: map[string]any{}, Token: owner.Token, Want: 400},
			{Name: "emails empty", Method: "POST", Path: p, Body: map[string]any{"emails": []string{}}, Token: owner.Token, Want: 400},
			{Name: "emails not an array", Method: "POST", Path: p, Body: map[string]any{"emails": "a@example.com"}, Token: owner.Token, Want: 400},
			{Name: "all invalid", Method: "POST", Path: p, Body: map[string]any{"emails": []string{"bad@", "nope"}}, Token: owner.Token, Want: 400},
			{Name: "kind unknown", Method: "POST", Path: p, Body: map[string]any{"kind": "sms", "emails": []string{"a@example.com"}}, Token: owner.Token, Want: 400},
			{Name: "role owner", Method: "POST", Path: p, Body: map[string]any{"emails": []string{"a@example.com"}, "role": "owner"}, Token: owner.Token, Want: 400},
			{Name: "role billing", Method: "POST", Path: p, Body: map[string]any{"emails": []string{"a@example.com"}, "role": "billing"}, Token: owner.Token, Want: 400},
			{Name: "role unknown", Method: "POST", Path: p, Body: map[string]any{"emails": []string{"a@example.com"}, "role": "boss"}, Token: owner.Token, Want: 400},
		})

		t.Run("email kind", func(t *testing.T) {
			mixed := "Mixed." + testenv.RandomHex(3) + "@Example.com"
			r := env.Do(t, "POST", p, owner.Token, map[string]any{
				"emails": []string{" " + mixed + " ", strings.ToLower(mixed), "bad@", "other-" + testenv.RandomHex(3) + "@example.com"},
				"role":   "admin",
			}).Want(t, 200)
			invs, _ := r.Get("invitations").([]any)
			invalid, _ := r.Get("invalid").([]any)
			if len(invs) != 2 || len(invalid) != 1 || invalid[0] != "bad@" {
				t.Fatalf("answer = %s; want 2 invitations (deduplicated) and invalid [bad@]", r.Body)
			}
			first := invs[0].(map[string]any)
			if first["email"] != strings.ToLower(mixed) || first["kind"] != "email" || first["role"] != "admin" || first["expires_at"] == nil {
				t.Errorf("invitation = %v; want email %s lowercased, kind email, role admin, an expiry", first, strings.ToLower(mixed))
			}
			for _, k := range []string{"id", "kind", "role", "email", "url", "expires_at", "created_at", "inviter"} {
				if _, ok := first[k]; !ok {
					t.Errorf("invitation = %v; want field %s", first, k)
				}
			}
			if first["inviter"] != "Test User" {
				t.Errorf("inviter = %v; want the inviter's name Test User", first["inviter"])
			}
			url, _ := first["url"].(string)
			if !strings.HasPrefix(url, "http://web.test/invite?token=") {
				t.Errorf("url = %q; want {web_url}/invite?token=…", url)
			}
			exp, _ := time.Parse(time.RFC3339, first["expires_at"].(string))
			created, _ := time.Parse(time.RFC3339, first["created_at"].(string))
			if d := exp.Sub(created); d != 14*24*time.Hour {
				t.Errorf("expires_at - created_at = %v; want 14 days", d)
			}
			// The mail carries the invitation's own secret, not the
			// inviter's: both open the same invitation.
			m := env.Mail.WaitFor(t, strings.ToLower(mixed), 5*time.Second)
			mailed := testenv.TokenFromLink(t, m.Text, "http://web.test/invite?token=")
			if mailed == testenv.InviteToken(t, url) {
				t.Errorf("mailed token = the answer's %q; want the mail's own", mailed)
			}
			byMail := env.Do(t, "GET", "/v1/invitations/"+mailed, "", nil).Want(t, 200).Body
			if byURL := env.Do(t, "GET", "/v1/invitations/"+testenv.InviteToken(t, url), "", nil).Want(t, 200).Body; string(byMail) != string(byURL) {
				t.Errorf("the mailed link previews %s; want the answer's %s", byMail, byURL)
			}
		})

		t.Run("link kind", func(t *testing.T) {
			r := env.Do(t, "POST", p, owner.Token, map[string]any{"kind": "link", "role": "admin", "emails": []string{"ignored@example.com"}}).Want(t, 200)
			inv, _ := r.Get("invitation").(map[string]any)
			if inv == nil || inv["kind"] != "link" || inv["role"] != "member" || inv["expires_at"] != nil {
				t.Fatalf("answer = %s; want {invitation} of kind link, role member, expires_at null", r.Body)
			}
			if _, ok := inv["email"]; ok {
				t.Errorf("link invitation = %v; want no email", inv)
			}
			if url, _ := inv["url"].(string); !strings.HasPrefix(url, "http://web.test/invite?token=") {
				t.Errorf("url = %q; want {web_url}/invite?token=…", url)
			}
		})
	})
}

// TestListAndRevokeInvitations covers GET and DELETE of an org's
// invitations: usable ones only, no secrets.
func TestListAndRevokeInvitations(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		p := "/v1/orgs/" + org + "/invitations"
		joiner := env.Register(t)
		used := env.Invite(t, owner.Token, org, joiner.Email, "member")
		env.Do(t, "POST", "/v1/invitations/"+used+"/accept", joiner.Token, nil).Want(t, 200)
		revoked := env.Do(t, "POST", p, owner.Token, map[string]any{"emails": []string{"revoked@example.com"}}).Want(t, 200)
		revokedID := revoked.Get("invitations").([]any)[0].(map[string]any)["id"].(string)
		revokedTok := testenv.InviteToken(t, revoked.Get("invitations").([]any)[0].(map[string]any)["url"].(string))
		env.Do(t, "POST", p, owner.Token, map[string]any{"emails": []string{"pending@example.com"}}).Want(t, 200)
		linkTok := env.InviteByLink(t, owner.Token, org)
		env.Do(t, "POST", "/v1/invitations/"+linkTok+"/accept", env.Register(t).Token, nil).Want(t, 200)

		env.RunCases(t, []testenv.Case{
			{Name: "key token lists", Method: "GET", Path: p, Token: env.ForgeKeyToken(t, owner.Token, org, "owner"), Want: 403},
			{Name: "revoke", Method: "DELETE", Path: p + "/" + revokedID, Token: owner.Token, Want: 200},
			{Name: "revoke again", Method: "DELETE", Path: p + "/" + revokedID, Token: owner.Token, Want: 404},
			{Name: "revoke unknown", Method: "DELETE", Path: p + "/00000000-0000-4000-8000-000000000000", Token: owner.Token, Want: 404},
			{Name: "revoke not an id", Method: "DELETE", Path: p + "/abc", Token: owner.Token, Want: 404},
			{Name: "preview revoked", Method: "GET", Path: "/v1/invitations/" + revokedTok, Want: 410},
			{Name: "accept revoked", Method: "POST", Path: "/v1/invitations/" + revokedTok + "/accept", Token: env.Register(t).Token, Want: 410},
		})

		r := env.Do(t, "GET", p, owner.Token, nil).Want(t, 200)
		invs, _ := r.Get("invitations").([]any)
		if len(invs) != 2 {
			t.Fatalf("invitations = %s; want the pending email one and the link (not used, not revoked)", r.Body)
		}
		kinds := map[string]bool{}
		for _, v := range invs {
			inv := v.(map[string]any)
			kinds[inv["kind"].(string)] = true
			if _, ok := inv["url"]; ok {
				t.Errorf("listed invitation %v carries a url; want no secrets in lists", inv)
			}
			if _, ok := inv["email"]; ok != (inv["kind"] == "email") {
				t.Errorf("listed invitation %v: email present = %v; want only on the email kind", inv, ok)
			}
			if inv["kind"] == "email" && inv["email"] != "pending@example.com" {
				t.Errorf("listed email invitation %v; want pending@example.com", inv)
			}
			if inv["inviter"] != "Test User" {
				t.Errorf("inviter = %v; want Test User", inv["inviter"])
			}
		}
		if !kinds["email"] || !kinds["link"] {
			t.Errorf("kinds listed = %v; want email and link", kinds)
		}
		if strings.Contains(string(r.Body), linkTok) {
			t.Errorf("list leaks a link secret")
		}

		// A personal org has none to list.
		u := env.Register(t)
		if r := env.Do(t, "GET", "/v1/orgs/"+u.OrgID+"/invitations", u.Token, nil).Want(t, 200); len(r.Get("invitations").([]any)) != 0 {
			t.Errorf("personal org invitations = %s; want none", r.Body)
		}
	})
}

// TestPreviewInvitation covers the public GET /v1/invitations/{token}.
func TestPreviewInvitation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		env.Do(t, "PATCH", "/v1/orgs/"+org, owner.Token, map[string]any{"avatar_url": "https://img.test/o.png"}).Want(t, 200)
		tok := env.Invite(t, owner.Token, org, "someone@example.com", "admin")
		env.RunCases(t, []testenv.Case{
			{Name: "unknown token", Method: "GET", Path: "/v1/invitations/not-a-token", Want: 404},
			{Name: "known token", Method: "GET", Path: "/v1/invitations/" + tok, Want: 200},
		})
		r := env.Do(t, "GET", "/v1/invitations/"+tok, "", nil).Want(t, 200)
		prof := env.Do(t, "GET", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200)
		if r.Str("org.name") != prof.Str("org.name") || r.Str("org.slug") != prof.Str("org.slug") || r.Str("org.avatar_url") != "https://img.test/o.png" ||
			r.Str("role") != "admin" || r.Str("kind") != "email" || r.Str("inviter") != "Test User" {
			t.Errorf("preview = %s; want org name, slug, avatar_url, role admin, kind email, inviter Test User", r.Body)
		}
		if r.Get("org.id") != nil || strings.Contains(string(r.Body), "someone@example.com") {
			t.Errorf("preview = %s; want only the org's name, slug and avatar, and no address", r.Body)
		}
	})
}

// TestAcceptInvitation covers POST /v1/invitations/{token}/accept.
func TestAcceptInvitation(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		joiner := env.Register(t)
		intruder := env.Register(t)
		tok := env.Invite(t, owner.Token, org, strings.ToUpper(joiner.Email), "admin")
		env.RunCases(t, []testenv.Case{
			{Name: "no token", Method: "POST", Path: "/v1/invitations/" + tok + "/accept", Want: 401},
			{Name: "unknown token", Method: "POST", Path: "/v1/invitations/nope/accept", Token: joiner.Token, Want: 404},
			{Name: "key token", Method: "POST", Path: "/v1/invitations/" + tok + "/accept", Token: env.ForgeKeyToken(t, joiner.Token, joiner.OrgID, "owner"), Want: 403},
			{Name: "other address", Method: "POST", Path: "/v1/invitations/" + tok + "/accept", Token: intruder.Token, Want: 403},
		})

		r := env.Do(t, "POST", "/v1/invitations/"+tok+"/accept", joiner.Token, nil).Want(t, 200)
		if r.Get("already_member") != false || r.Str("org.id") != org || r.Str("org.role") != "admin" || r.Str("org.kind") != "team" {
			t.Errorf("accept = %s; want already_member false, org %s with role admin", r.Body, org)
		}
		if tools, _ := r.Get("org.tools").([]any); len(tools) != 7 {
			t.Errorf("accept org tools = %v; want the seven enabled tools", r.Get("org.tools"))
		}
		c, before := testenv.Claims(t, r.Str("access_token")), testenv.Claims(t, joiner.Token)
		if oc, _ := c["org"].(map[string]any); oc["id"] != org || oc["role"] != "admin" {
			t.Errorf("token org claim = %v; want %s admin", c["org"], org)
		}
		if c["via"] != before["via"] || c["sid"] != before["sid"] {
			t.Errorf("token via, sid = %v, %v; want the caller's %v, %v", c["via"], c["sid"], before["via"], before["sid"])
		}
		if r.Get("refresh_token") != nil {
			t.Errorf("accept answer carries a refresh token; want the refresh token left alone")
		}
		// The refresh token still works and now lands in the org: it became the default.
		ref := env.Do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": joiner.Refresh}).Want(t, 200)
		if ref.Str("org.id") != org {
			t.Errorf("refresh after accept lands in %s; want the joined org %s", ref.Str("org.id"), org)
		}
		if roles := env.MemberRoles(t, owner.Token, org); roles[joiner.UserID] != "admin" {
			t.Errorf("joiner's role = %q; want admin (the invited role)", roles[joiner.UserID])
		}

		env.RunCases(t, []testenv.Case{
			{Name: "preview used", Method: "GET", Path: "/v1/invitations/" + tok, Want: 410},
			{Name: "used by another", Method: "POST", Path: "/v1/invitations/" + tok + "/accept", Token: intruder.Token, Want: 410}, // used up: 410 whoever asks
		})
		again := env.Do(t, "POST", "/v1/invitations/"+tok+"/accept", joiner.Token, nil).Want(t, 200)
		if again.Get("already_member") != true || again.Str("org.role") != "admin" {
			t.Errorf("second accept = %s; want 200 already_member true", again.Body)
		}

		// An existing member does not use up an email invitation (one sent
		// before they joined another way: inviting a member is refused).
		member := env.Register(t)
		extra := env.Invite(t, owner.Token, org, member.Email, "admin")
		env.Do(t, "POST", "/v1/invitations/"+env.InviteByLink(t, owner.Token, org)+"/accept", member.Access, nil).Want(t, 200)
		r = env.Do(t, "POST", "/v1/invitations/"+extra+"/accept", member.Access, nil).Want(t, 200)
		if r.Get("already_member") != true || r.Str("org.role") != "member" {
			t.Errorf("existing member accepts = %s; want already_member true and the role kept (member)", r.Body)
		}
		env.Do(t, "GET", "/v1/invitations/"+extra, "", nil).Want(t, 200)

		// A link invitation works for anyone, many times, always as member.
		link := env.InviteByLink(t, owner.Token, org)
		for range 3 {
			u := env.Register(t)
			if r := env.Do(t, "POST", "/v1/invitations/"+link+"/accept", u.Token, nil).Want(t, 200); r.Str("org.role") != "member" {
				t.Errorf("link accept role = %q; want member", r.Str("org.role"))
			}
		}
		env.Do(t, "GET", "/v1/invitations/"+link, "", nil).Want(t, 200)
		if r := env.Do(t, "GET", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200); r.Get("org.member_count") != float64(6) {
			t.Errorf("member_count = %v; want 6", r.Get("org.member_count"))
		}
	})
}

// TestInvitationExpiry checks the 14-day life of email invitations on the
// service clock; link invitations do not expire.
func TestInvitationExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		early := env.Register(t)
		late := env.Register(t)
		earlyTok := env.Invite(t, owner.Token, org, early.Email, "member")
		lateTok := env.Invite(t, owner.Token, org, late.Email, "member")
		link := env.InviteByLink(t, owner.Token, org)

		env.Clock.Advance(14*24*time.Hour - time.Second)
		fresh := func(u *testenv.Account) string {
			return env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": u.Email, "password": u.Password}).Want(t, 200).Str("access_token")
		}
		env.Do(t, "GET", "/v1/invitations/"+lateTok, "", nil).Want(t, 200)
		env.Do(t, "POST", "/v1/invitations/"+earlyTok+"/accept", fresh(early), nil).Want(t, 200)

		env.Clock.Advance(2 * time.Second)
		lateAccess, ownerAccess := fresh(late), fresh(owner)
		env.RunCases(t, []testenv.Case{
			{Name: "preview expired", Method: "GET", Path: "/v1/invitations/" + lateTok, Want: 410},
			{Name: "accept expired", Method: "POST", Path: "/v1/invitations/" + lateTok + "/accept", Token: lateAccess, Want: 410},
			{Name: "link still previews", Method: "GET", Path: "/v1/invitations/" + link, Want: 200},
		})
		r := env.Do(t, "GET", "/v1/orgs/"+org+"/invitations", ownerAccess, nil).Want(t, 200)
		if invs := r.Get("invitations").([]any); len(invs) != 1 || invs[0].(map[string]any)["kind"] != "link" {
			t.Errorf("invitations after expiry = %s; want only the link", r.Body)
		}
		env.Do(t, "POST", "/v1/invitations/"+link+"/accept", lateAccess, nil).Want(t, 200)
	})
}

// TestAcceptRace accepts at the same moment, 20 times over: one email
// invitation by its one addressee (exactly one accept consumes it, the rest
// answer 200 already_member), and one link invitation by 20 different users
// (all 20 join).
func TestAcceptRace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)

		t.Run("email invitation, same user", func(t *testing.T) {
			u := env.Register(t)
			tok := env.Invite(t, owner.Token, org, u.Email, "admin")
			rs := testenv.AtOnceAnswers(20, func(int) *testenv.Resp {
				return env.Do(t, "POST", "/v1/invitations/"+tok+"/accept", u.Token, nil)
			})
			joined, already := 0, 0
			for _, r := range rs {
				switch {
				case r.Status == 200 && r.Get("already_member") == false:
					joined++
				case r.Status == 200 && r.Get("already_member") == true:
					already++
				default:
					t.Errorf("accept: status %d, body %s; want 200", r.Status, r.Body)
				}
			}
			if joined != 1 || already != 19 {
				t.Errorf("%d joined, %d already members; want 1 and 19", joined, already)
			}
			if n := len(env.StoredAudit(t, org, "identity.invitation.accepted")); n != 1 {
				t.Errorf("%d identity.invitation.accepted entries; want 1", n)
			}
			env.Do(t, "GET", "/v1/invitations/"+tok, "", nil).Want(t, 410)
		})

		t.Run("link invitation, same user", func(t *testing.T) {
			link := env.InviteByLink(t, owner.Token, org)
			u := env.Register(t)
			rs := testenv.AtOnceAnswers(20, func(int) *testenv.Resp {
				return env.Do(t, "POST", "/v1/invitations/"+link+"/accept", u.Token, nil)
			})
			joined := 0
			for _, r := range rs {
				if r.Status != 200 {
					t.Errorf("accept: status %d, body %s; want 200", r.Status, r.Body)
				} else if r.Get("already_member") == false {
					joined++
				}
			}
			if joined != 1 {
				t.Errorf("%d accepts joined; want 1 (the others already_member)", joined)
			}
			if roles := env.MemberRoles(t, owner.Token, org); roles[u.UserID] != "member" {
				t.Errorf("role = %q; want member", roles[u.UserID])
			}
		})

		t.Run("link invitation, 20 users", func(t *testing.T) {
			link := env.InviteByLink(t, owner.Token, org)
			users := make([]*testenv.Account, 20)
			for i := range users {
				users[i] = env.Register(t)
			}
			rs := testenv.AtOnceAnswers(20, func(i int) *testenv.Resp {
				return env.Do(t, "POST", "/v1/invitations/"+link+"/accept", users[i].Token, nil)
			})
			for i, r := range rs {
				if r.Status != 200 || r.Get("already_member") != false {
					t.Errorf("user %d accept: status %d, body %s; want 200 already_member false", i, r.Status, r.Body)
				}
			}
			roles := env.MemberRoles(t, owner.Token, org)
			for i, u := range users {
				if roles[u.UserID] != "member" {
					t.Errorf("user %d role = %q; want member", i, roles[u.UserID])
				}
			}
		})
	})
}

// TestAcceptRacesOrgDelete checks accepts of a link invitation racing the
// org's deletion: each accept joins before the delete or answers 410,
// never an error, and no one is left a member of a live-looking org.
func TestAcceptRacesOrgDelete(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		link := env.InviteByLink(t, owner.Token, org)
		users := make([]*testenv.Account, 12)
		for i := range users {
			users[i] = env.Register(t)
		}
		rs := testenv.AtOnceAnswers(len(users)+1, func(i int) *testenv.Resp {
			if i == len(users) {
				return env.Do(t, "DELETE", "/v1/orgs/"+org, owner.Token, nil)
			}
			return env.Do(t, "POST", "/v1/invitations/"+link+"/accept", users[i].Token, nil)
		})
		if rs[len(users)].Status != 200 {
			t.Fatalf("delete org: %d %s", rs[len(users)].Status, rs[len(users)].Body)
		}
		for i, r := range rs[:len(users)] {
			if r.Status != 200 && r.Status != 410 {
				t.Errorf("accept %d: %d %s; want 200 or 410", i, r.Status, r.Body)
			}
		}
		env.Do(t, "GET", "/v1/orgs/"+org, owner.Access, nil).Want(t, 404)
		env.Do(t, "POST", "/v1/invitations/"+link+"/accept", users[0].Token, nil).Want(t, 410)
	})
}
