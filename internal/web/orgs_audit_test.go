package web_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestOrgAuditTrail runs every mutating operation of spec 4.3 once and checks
// that each wrote exactly one identity entry with its actor, target and meta,
// and that refused operations wrote none.
func TestOrgAuditTrail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		joiner := env.Register(t)
		leaver := env.Register(t)
		var inviteTok, linkTok, revokeID string

		steps := []struct {
			name       string
			do         func(t *testing.T)
			action     string // "" when nothing may be written
			actor      *string
			targetType string
			target     func() string
			meta       map[string]any
		}{
			{"org created", func(t *testing.T) {}, "identity.org.created", &owner.UserID, "org", func() string { return org }, nil},
			{"org updated", func(t *testing.T) {
				env.Do(t, "PATCH", "/v1/orgs/"+org, owner.Token, map[string]any{"name": "Audited", "slug": "audited-" + testenv.RandomHex(2)}).Want(t, 200)
			}, "identity.org.updated", &owner.UserID, "org", func() string { return org }, nil},
			{"empty patch refused", func(t *testing.T) {
				env.Do(t, "PATCH", "/v1/orgs/"+org, owner.Token, map[string]any{"name": "Audited"}).Want(t, 400)
			}, "", nil, "", nil, nil},
			{"email invitation created", func(t *testing.T) {
				inviteTok = env.Invite(t, owner.Token, org, joiner.Email, "member")
			}, "identity.invitation.created", &owner.UserID, "invitation", nil, map[string]any{"kind": "email", "role": "member", "email": joiner.Email}},
			{"link invitation created", func(t *testing.T) {
				linkTok = env.InviteByLink(t, owner.Token, org)
			}, "identity.invitation.created", &owner.UserID, "invitation", nil, map[string]any{"kind": "link", "role": "member"}},
			{"invitation accepted", func(t *testing.T) {
				joiner.Token = env.Do(t, "POST", "/v1/invitations/"+inviteTok+"/accept", joiner.Token, nil).Want(t, 200).Str("access_token")
			}, "identity.invitation.accepted", &joiner.UserID, "invitation", nil, map[string]any{"kind": "email", "role": "member", "user_id": joiner.UserID}},
			{"accept by a member writes nothing", func(t *testing.T) {
				env.Do(t, "POST", "/v1/invitations/"+linkTok+"/accept", joiner.Token, nil).Want(t, 200)
			}, "", nil, "", nil, nil},
			{"role changed", func(t *testing.T) {
				env.Do(t, "PATCH", "/v1/orgs/"+org+"/members/"+joiner.UserID, owner.Token, map[string]any{"role": "admin"}).Want(t, 200)
			}, "identity.member.role_changed", &owner.UserID, "user", func() string { return joiner.UserID }, map[string]any{"old_role": "member", "new_role": "admin"}},
			{"unchanged role writes nothing", func(t *testing.T) {
				env.Do(t, "PATCH", "/v1/orgs/"+org+"/members/"+joiner.UserID, owner.Token, map[string]any{"role": "admin"}).Want(t, 200)
			}, "", nil, "", nil, nil},
			{"last owner refused", func(t *testing.T) {
				env.Do(t, "PATCH", "/v1/orgs/"+org+"/members/"+owner.UserID, owner.Token, map[string]any{"role": "admin"}).Want(t, 409)
			}, "", nil, "", nil, nil},
			{"invitation revoked", func(t *testing.T) {
				r := env.Do(t, "POST", "/v1/orgs/"+org+"/invitations", owner.Token, map[string]any{"emails": []string{"gone@example.com"}}).Want(t, 200)
				revokeID = r.Get("invitations").([]any)[0].(map[string]any)["id"].(string)
				env.Clock.Advance(time.Second)
				env.Do(t, "DELETE", "/v1/orgs/"+org+"/invitations/"+revokeID, joiner.Token, nil).Want(t, 200)
			}, "identity.invitation.revoked", &joiner.UserID, "invitation", func() string { return revokeID }, nil},
			{"member left", func(t *testing.T) {
				leaver.Token = env.Do(t, "POST", "/v1/invitations/"+linkTok+"/accept", leaver.Token, nil).Want(t, 200).Str("access_token")
				env.Clock.Advance(time.Second)
				env.Do(t, "DELETE", "/v1/orgs/"+org+"/members/"+leaver.UserID, leaver.Token, nil).Want(t, 200)
			}, "identity.member.removed", &leaver.UserID, "user", func() string { return leaver.UserID }, map[string]any{"role": "member", "self": true}},
			{"member removed", func(t *testing.T) {
				env.Do(t, "DELETE", "/v1/orgs/"+org+"/members/"+joiner.UserID, owner.Token, nil).Want(t, 200)
			}, "identity.member.removed", &owner.UserID, "user", func() string { return joiner.UserID }, map[string]any{"role": "admin", "self": false}},
			{"org deleted", func(t *testing.T) {
				env.Do(t, "DELETE", "/v1/orgs/"+org, owner.Token, nil).Want(t, 200)
			}, "identity.org.deleted", &owner.UserID, "org", func() string { return org }, nil},
		}

		seen := len(env.StoredAudit(t, org, "")) - 1 // all but org.created, checked first
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				env.Clock.Advance(time.Second) // entries order by time: newest first
				st.do(t)
				all := env.StoredAudit(t, org, "")
				// Steps that add entries besides their own (the revoke step
				// creates an invitation first, the leave step accepts one).
				extra := 0
				if st.name == "member left" || st.action == "identity.invitation.revoked" {
					extra = 1
				}
				want := seen + 1 + extra
				if st.action == "" {
					want = seen
				}
				if len(all) != want {
					t.Fatalf("%d entries after %q; want %d", len(all), st.name, want)
				}
				seen = len(all)
				if st.action == "" {
					return
				}
				e := all[0]
				if e["action"] != st.action {
					t.Fatalf("newest action = %s; want %s", e["action"], st.action)
				}
				if e["actor_id"] != *st.actor || e["target_type"] != st.targetType {
					t.Errorf("%s: actor %s, target type %s; want %s, %s", st.action, e["actor_id"], e["target_type"], *st.actor, st.targetType)
				}
				if st.target != nil && e["target_id"] != st.target() {
					t.Errorf("%s: target %s; want %s", st.action, e["target_id"], st.target())
				}
				var meta map[string]any
				if err := json.Unmarshal([]byte(e["meta"]), &meta); err != nil {
					t.Fatalf("%s: meta %q is not a JSON object: %v", st.action, e["meta"], err)
				}
				for k, v := range st.meta {
					if meta[k] != v {
						t.Errorf("%s: meta = %s; want %s = %v", st.action, e["meta"], k, v)
					}
				}
			})
		}

		upd := env.StoredAudit(t, org, "identity.org.updated")
		if len(upd) != 1 {
			t.Fatalf("%d identity.org.updated entries; want 1", len(upd))
		}
		var meta struct {
			Before map[string]any `json:"before"`
			After  map[string]any `json:"after"`
		}
		json.Unmarshal([]byte(upd[0]["meta"]), &meta)
		if meta.After["name"] != "Audited" || meta.Before["name"] == nil || meta.Before["slug"] == nil || meta.After["avatar_url"] != nil {
			t.Errorf("org.updated meta = %s; want before/after of the changed name and slug only", upd[0]["meta"])
		}
		if n := len(env.StoredAudit(t, org, "identity.invitation.created")); n != 3 {
			t.Errorf("%d identity.invitation.created entries; want 3 (email, link, revoked one)", n)
		}
	})
}
