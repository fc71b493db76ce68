package workspace_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestWsAuditLog covers "GET /v1/orgs/{id}/audit" (spec 2 Audit entry, 4.4
// rule 1, section 8 limits; CONTRACT §3 Audit entry).
func TestWsAuditLog(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		audit := "/v1/orgs/" + w.Org + "/audit"
		first := env.CreateTeam(t, w.Owner.Access, w.Org, "First")
		// 600 entries of another tool, each older than the first team's,
		// and one in another org.
		env.InsertAudit(t, w.Org, "tasks", "tasks.issue.created", 600, env.Clock.Now())
		other := env.TeamOrg(t, "Other org", [2]string{w.Owner.UserID, "owner"})
		env.InsertAudit(t, other, "crm", "crm.deal.created", 1, env.Clock.Now())
		env.Clock.Advance(time.Second)
		second := env.CreateTeam(t, w.Owner.Access, w.Org, "Second")
		env.Clock.Advance(time.Second)
		memberKey := env.Exchange(t, env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Member bot", "role": "member"}).Str("api_key.secret")).Want(t, 200).Str("access_token")
		// The key creation is the newest entry now.
		env.Clock.Advance(time.Second)
		third := env.CreateTeam(t, w.Owner.Access, w.Org, "Third")

		// entries checks the shape of every entry, that all are of the org
		// and newest first, and returns them.
		entries := func(t *testing.T, r *testenv.Resp, n int) []map[string]any {
			t.Helper()
			es := r.List(t, "entries")
			if len(es) != n {
				t.Fatalf("%d entries; want %d", len(es), n)
			}
			var prev time.Time
			for i, e := range es {
				testenv.CheckEntry(t, e)
				if e["org_id"] != w.Org {
					t.Errorf("entries[%d].org_id = %v; want %s", i, e["org_id"], w.Org)
				}
				at := testenv.Time(t, "at", e["at"])
				if i > 0 && at.After(prev) {
					t.Errorf("entries[%d].at = %s is newer than entries[%d].at = %s; want newest first", i, at, i-1, prev)
				}
				prev = at
			}
			return es
		}
		// tasksRun checks es are the inserted tasks entries from index from on.
		tasksRun := func(t *testing.T, es []map[string]any, from int) {
			t.Helper()
			for i, e := range es {
				var m struct{ N int }
				json.Unmarshal([]byte(e["meta"].(string)), &m)
				if e["tool"] != "tasks" || e["action"] != "tasks.issue.created" || m.N != from+i {
					t.Fatalf("entry %d = %v; want the inserted tasks entry n=%d", i, e, from+i)
				}
			}
		}
		count := func(n int) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) { entries(t, r, n) }
		}
		get := func(name, query, token string, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			path := audit
			if query != "" {
				path += "?" + query
			}
			return testenv.Case{Name: name, Method: "GET", Path: path, Token: token, Want: want, Check: check}
		}

		env.RunCases(t, []testenv.Case{
			get("default limit is 100, newest first", "", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				es := entries(t, r, 100)
				wantHead := []string{third, "", second, first}
				for i, target := range wantHead {
					if target != "" && (es[i]["action"] != "identity.team.created" || es[i]["target_id"] != target) {
						t.Errorf("entries[%d] = %v; want team.created of %s", i, es[i], target)
					}
				}
				if es[1]["action"] != "identity.api_key.created" {
					t.Errorf("entries[1] = %v; want the key creation", es[1])
				}
				tasksRun(t, es[4:], 0)
			}),
			get("admin", "", w.Admin.Access, 200, count(100)),
			get("limit=1", "limit=1", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				if es := entries(t, r, 1); es[0]["target_id"] != third {
					t.Errorf("entries = %v; want the newest, team.created of %s", es, third)
				}
			}),
			get("limit=500", "limit=500", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) { tasksRun(t, entries(t, r, 500)[4:], 0) }),
			get("limit=250", "limit=250", w.Owner.Access, 200, count(250)),
			get("limit=0", "limit=0", w.Owner.Access, 400, nil),
			get("limit=501", "limit=501", w.Owner.Access, 400, nil),
			get("limit=-1", "limit=-1", w.Owner.Access, 400, nil),
			get("limit=abc", "limit=abc", w.Owner.Access, 400, nil),
			get("limit=1.5", "limit=1.5", w.Owner.Access, 400, nil),
			get("limit empty", "limit=", w.Owner.Access, 400, nil),
			get("tool=tasks", "tool=tasks", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) { tasksRun(t, entries(t, r, 100), 0) }),
			get("tool=identity", "tool=identity", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				for _, e := range entries(t, r, 4) {
					if e["tool"] != "identity" || !strings.HasPrefix(e["action"].(string), "identity.") {
						t.Errorf("entry %v; want tool identity", e)
					}
				}
			}),
			get("action filter", "action=identity.team.created", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				var got []any
				for _, e := range entries(t, r, 3) {
					got = append(got, e["target_id"])
				}
				if want := []any{third, second, first}; !slices.Equal(got, want) {
					t.Errorf("team.created targets = %v; want %v", got, want)
				}
			}),
			get("action filter with limit", "action=tasks.issue.created&limit=7", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) { tasksRun(t, entries(t, r, 7), 0) }),
			get("tool and action together", "tool=tasks&action=identity.team.created", w.Owner.Access, 200, count(0)),
			get("another org's tool", "tool=crm", w.Owner.Access, 200, count(0)),
			get("unknown action", "action=identity.nothing.happened", w.Owner.Access, 200, count(0)),
			get("tools lists the org's distinct tools", "limit=1", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				got := testenv.Strings(r.Get("tools"))
				slices.Sort(got)
				if want := []string{"identity", "tasks"}; !slices.Equal(got, want) {
					t.Errorf("tools = %v; want %v (not crm, which is another org's)", r.Get("tools"), want)
				}
			}),
			get("tools ignores the filters", "tool=tasks&limit=1", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				got := testenv.Strings(r.Get("tools"))
				slices.Sort(got)
				if want := []string{"identity", "tasks"}; !slices.Equal(got, want) {
					t.Errorf("tools = %v; want %v", r.Get("tools"), want)
				}
			}),
			get("member", "", w.Member.Access, 403, nil),
			get("billing", "", w.Billing.Access, 403, nil),
			get("member-role org key", "", memberKey, 403, nil),
			get("stranger", "", w.Stranger.Access, 404, nil),
			get("no token", "", "", 401, nil),
			{Name: "other org's log holds its own entry only", Method: "GET", Path: "/v1/orgs/" + other + "/audit", Token: w.Owner.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					es := r.List(t, "entries")
					if len(es) != 1 || es[0]["tool"] != "crm" || es[0]["org_id"] != other {
						t.Errorf("entries = %v; want the one crm entry", es)
					}
					if got := testenv.Strings(r.Get("tools")); !slices.Equal(got, []string{"crm"}) {
						t.Errorf("tools = %v; want [crm]", r.Get("tools"))
					}
				}},
		})
	})
}

// TestWsAuditTrail checks that every mutation of the workspace API writes
// exactly one audit entry with the right action, actor and target, meta a
// JSON-encoded object (CONTRACT §4 audit actions), and that operations that
// change nothing write none.
func TestWsAuditTrail(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		org := "/v1/orgs/" + w.Org
		domain := testenv.Domain()
		var team, key, keySecret, claimID string
		var claim map[string]any
		var joiner *testenv.Account

		seen := env.AuditIDs(t, w.Owner.Access, w.Org)
		steps := []struct {
			name   string
			action string // "" when the step must write nothing; a trailing "." matches a prefix
			actor  func() string
			target func() string
			do     func(t *testing.T)
		}{
			{"create team", "identity.team.created", userIDOf(w.Member), valueOf(&team), func(t *testing.T) {
				team = env.CreateTeam(t, w.Member.Access, w.Org, "Platform")
			}},
			{"rename team", "identity.team.updated", userIDOf(w.Owner), valueOf(&team), func(t *testing.T) {
				env.Call(t, "PATCH", org+"/teams/"+team, w.Owner.Access, map[string]string{"name": "Platform Ops"}).Want(t, 200)
			}},
			{"add team member", "identity.team.", userIDOf(w.Member), userIDOf(w.Billing), func(t *testing.T) {
				env.Call(t, "POST", org+"/teams/"+team+"/members", w.Member.Access, map[string]string{"user_id": w.Billing.UserID, "role": "member"}).Want(t, 200)
			}},
			{"change team role", "identity.team.", userIDOf(w.Admin), userIDOf(w.Billing), func(t *testing.T) {
				env.Call(t, "POST", org+"/teams/"+team+"/members", w.Admin.Access, map[string]string{"user_id": w.Billing.UserID, "role": "lead"}).Want(t, 200)
			}},
			{"remove team member", "identity.team.", userIDOf(w.Billing), userIDOf(w.Billing), func(t *testing.T) {
				env.Call(t, "DELETE", org+"/teams/"+team+"/members/"+w.Billing.UserID, w.Billing.Access, nil).Want(t, 200)
			}},
			{"delete team", "identity.team.deleted", userIDOf(w.Admin), valueOf(&team), func(t *testing.T) {
				env.Call(t, "DELETE", org+"/teams/"+team, w.Admin.Access, nil).Want(t, 200)
			}},
			{"disable tool", "identity.tool.disabled", userIDOf(w.Admin), nil, func(t *testing.T) {
				env.SetTool(t, w.Admin.Access, w.Org, "links", false)
			}},
			{"enable tool", "identity.tool.enabled", userIDOf(w.Owner), nil, func(t *testing.T) {
				env.SetTool(t, w.Owner.Access, w.Org, "links", true)
			}},
			{"enable an enabled tool", "", nil, nil, func(t *testing.T) {
				env.SetTool(t, w.Owner.Access, w.Org, "links", true)
			}},
			{"create org key", "identity.api_key.created", userIDOf(w.Admin), valueOf(&key), func(t *testing.T) {
				r := env.CreateOrgKey(t, w.Admin.Access, w.Org, map[string]any{"name": "Robot", "role": "member"})
				key, keySecret = r.Str("api_key.id"), r.Str("api_key.secret")
			}},
			{"exchange and list keys", "", nil, nil, func(t *testing.T) {
				env.Exchange(t, keySecret).Want(t, 200)
				env.Call(t, "GET", org+"/api-keys", w.Owner.Access, nil).Want(t, 200)
			}},
			{"revoke org key", "identity.api_key.revoked", userIDOf(w.Owner), valueOf(&key), func(t *testing.T) {
				env.Call(t, "DELETE", org+"/api-keys/"+key, w.Owner.Access, nil).Want(t, 200)
			}},
			{"claim domain", "identity.domain.created", userIDOf(w.Owner), valueOf(&claimID), func(t *testing.T) {
				claim = env.ClaimDomain(t, w.Owner.Access, w.Org, domain, "")
				claimID, _ = claim["id"].(string)
			}},
			{"failed verification", "", nil, nil, func(t *testing.T) {
				env.Call(t, "POST", org+"/domains/"+claimID+"/verify", w.Owner.Access, nil).Want(t, 400)
			}},
			{"verify domain", "identity.domain.verified", userIDOf(w.Admin), valueOf(&claimID), func(t *testing.T) {
				env.PublishProof(t, claim)
				env.Call(t, "POST", org+"/domains/"+claimID+"/verify", w.Admin.Access, nil).Want(t, 200)
			}},
			{"verify again", "", nil, nil, func(t *testing.T) {
				env.Call(t, "POST", org+"/domains/"+claimID+"/verify", w.Admin.Access, nil).Want(t, 200)
			}},
			{"register at the domain", "", nil, nil, func(t *testing.T) {
				joiner = env.VerifiedAt(t, domain)
			}},
			{"join by domain", "identity.member.joined", func() string { return joiner.UserID }, func() string { return joiner.UserID }, func(t *testing.T) {
				env.Call(t, "POST", "/v1/me/discoverable/join", joiner.Access, nil).Want(t, 200)
			}},
			{"join again", "", nil, nil, func(t *testing.T) {
				env.Call(t, "POST", "/v1/me/discoverable/join", joiner.Access, nil).Want(t, 200)
			}},
			{"switch to auto_join", "identity.domain.updated", userIDOf(w.Owner), valueOf(&claimID), func(t *testing.T) {
				env.Call(t, "PATCH", org+"/domains/"+claimID, w.Owner.Access, map[string]string{"mode": "auto_join"}).Want(t, 200)
			}},
			{"register at an auto_join domain: withheld", "", nil, nil, func(t *testing.T) {
				joiner = env.RegisterAt(t, domain)
			}},
			{"verify email: auto-join", "identity.member.joined", func() string { return joiner.UserID }, func() string { return joiner.UserID }, func(t *testing.T) {
				env.VerifyEmail(t, joiner)
			}},
			{"remove domain", "identity.domain.deleted", userIDOf(w.Owner), valueOf(&claimID), func(t *testing.T) {
				env.Call(t, "DELETE", org+"/domains/"+claimID, w.Owner.Access, nil).Want(t, 200)
			}},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				st.do(t)
				got := env.NewEntries(t, w.Owner.Access, w.Org, seen)
				if st.action == "" {
					if len(got) != 0 {
						t.Fatalf("new audit entries %v; want none", got)
					}
					return
				}
				if len(got) != 1 {
					t.Fatalf("%d new audit entries %v; want exactly one %s", len(got), got, st.action)
				}
				e := got[0]
				testenv.CheckEntry(t, e)
				action, _ := e["action"].(string)
				if strings.HasSuffix(st.action, ".") && !strings.HasPrefix(action, st.action) || !strings.HasSuffix(st.action, ".") && action != st.action {
					t.Errorf("action = %q; want %q", action, st.action)
				}
				if e["tool"] != "identity" || e["org_id"] != w.Org {
					t.Errorf("tool, org_id = %v, %v; want identity, %s", e["tool"], e["org_id"], w.Org)
				}
				if st.actor != nil && e["actor_id"] != st.actor() {
					t.Errorf("actor_id = %v; want %s", e["actor_id"], st.actor())
				}
				if st.target != nil && e["target_id"] != st.target() {
					t.Errorf("target_id = %v; want %s", e["target_id"], st.target())
				}
			})
		}
	})
}

// userIDOf returns a user id lazily, for tables built before the users act.
func userIDOf(a *testenv.Account) func() string { return func() string { return a.UserID } }

// valueOf reads *p lazily, for ids set by earlier steps.
func valueOf(p *string) func() string { return func() string { return *p } }

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
