package web_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// wsCheckClaim checks a Domain claim record (CONTRACT §3): while unverified
// it carries dns_record {type TXT, name _service.<domain>, value}; once
// verified, verified_at is set and dns_record is null.
func wsCheckClaim(t *testing.T, d map[string]any, domain, mode string, verified bool) {
	t.Helper()
	wsCheckKeys(t, "domain", d, "id", "domain", "mode", "verified", "verified_at", "created_at", "dns_record")
	if id, _ := d["id"].(string); !signinUUID.MatchString(id) {
		t.Errorf("domain.id = %#v; want a uuid", d["id"])
	}
	if d["domain"] != domain || d["mode"] != mode || d["verified"] != verified {
		t.Errorf("domain, mode, verified = %v, %v, %v; want %s, %s, %v", d["domain"], d["mode"], d["verified"], domain, mode, verified)
	}
	meTime(t, "domain.created_at", d["created_at"])
	if verified {
		meTime(t, "domain.verified_at", d["verified_at"])
		if d["dns_record"] != nil {
			t.Errorf("dns_record = %v; want null once verified", d["dns_record"])
		}
		return
	}
	if d["verified_at"] != nil {
		t.Errorf("verified_at = %v; want null while unverified", d["verified_at"])
	}
	rec, _ := d["dns_record"].(map[string]any)
	if rec == nil {
		t.Fatalf("dns_record = %#v; want {type, name, value} while unverified", d["dns_record"])
	}
	wsCheckKeys(t, "dns_record", rec, "type", "name", "value")
	if rec["type"] != "TXT" || rec["name"] != "_service."+domain {
		t.Errorf("dns_record type, name = %v, %v; want TXT, _service.%s", rec["type"], rec["name"], domain)
	}
	if v, _ := rec["value"].(string); len(v) < 16 {
		t.Errorf("dns_record.value = %#v; want a token", rec["value"])
	}
}

// TestWsDomains covers claiming, listing, changing and removing domain
// claims (spec 3 Domain claim rows, 4.4 rule 2, section 7; CONTRACT §3).
func TestWsDomains(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		domains := "/v1/orgs/" + w.org + "/domains"
		rnd := testenv.RandomHex(4)
		plain := wsDomain()
		// A domain another org verified already.
		rival := meTeamOrg(t, env, "Rival", [2]string{w.stranger.UserID, "owner"})
		taken := wsDomain()
		wsVerifiedDomain(t, env, w.stranger.Access, rival, taken, "")
		claims := map[string]map[string]any{} // domain → claim answer

		claimed := func(domain, mode string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				d := wsObj(t, r, "domain")
				wsCheckClaim(t, d, domain, mode, false)
				claims[domain] = d
			}
		}
		post := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) wsCase {
			return wsCase{name: name, method: "POST", path: domains, token: token, body: body, wantStatus: want, wantBody: check}
		}

		t.Run("create", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				post("plain domain, mode defaults to suggest", w.owner.Access, map[string]string{"domain": plain}, 200, claimed(plain, "suggest")),
				post("normalized: scheme, www, case, path, trailing dot", w.owner.Access, map[string]string{"domain": "https://www.Example-" + rnd + ".test/path."}, 200, claimed("example-"+rnd+".test", "suggest")),
				post("normalized: trailing dot", w.owner.Access, map[string]string{"domain": "Dot-" + rnd + ".test."}, 200, claimed("dot-"+rnd+".test", "suggest")),
				post("auto_join by an admin", w.admin.Access, map[string]string{"domain": "auto-" + rnd + ".test", "mode": "auto_join"}, 200, claimed("auto-"+rnd+".test", "auto_join")),
				post("gmail.com", w.owner.Access, map[string]string{"domain": "gmail.com"}, 400, nil),
				post("outlook.com", w.owner.Access, map[string]string{"domain": "outlook.com"}, 400, nil),
				post("yahoo.com", w.owner.Access, map[string]string{"domain": "yahoo.com"}, 400, nil),
				post("public provider spelled as a URL", w.owner.Access, map[string]string{"domain": "https://www.GMAIL.com/"}, 400, nil),
				post("not a domain", w.owner.Access, map[string]string{"domain": "not a domain"}, 400, nil),
				post("single label", w.owner.Access, map[string]string{"domain": "localhost"}, 400, nil),
				post("IP address", w.owner.Access, map[string]string{"domain": "10.0.0.1"}, 400, nil),
				post("empty domain", w.owner.Access, map[string]string{"domain": ""}, 400, nil),
				post("domain missing", w.owner.Access, map[string]string{"mode": "suggest"}, 400, nil),
				post("mode unknown", w.owner.Access, map[string]string{"domain": "mode-" + rnd + ".test", "mode": "invite"}, 400, nil),
				post("same domain again", w.owner.Access, map[string]string{"domain": plain}, 409, nil),
				post("same domain again, spelled differently", w.admin.Access, map[string]string{"domain": "http://WWW." + strings.ToUpper(plain) + "/x"}, 409, nil),
				post("verified by another org", w.owner.Access, map[string]string{"domain": taken}, 409, nil),
				post("member", w.member.Access, map[string]string{"domain": "m-" + rnd + ".test"}, 403, nil),
				post("billing", w.billing.Access, map[string]string{"domain": "b-" + rnd + ".test"}, 403, nil),
				post("stranger", w.stranger.Access, map[string]string{"domain": "s-" + rnd + ".test"}, 404, nil),
				post("no token", "", map[string]string{"domain": "n-" + rnd + ".test"}, 401, nil),
				{name: "personal org", method: "POST", path: "/v1/orgs/" + w.owner.OrgID + "/domains", token: w.owner.Access, body: map[string]string{"domain": "p-" + rnd + ".test"}, wantStatus: 403},
			})
		})

		t.Run("list", func(t *testing.T) {
			wsRun(t, env, []wsCase{
				{name: "owner", method: "GET", path: domains, token: w.owner.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) {
						rows := meList(t, r, "domains")
						if len(rows) != len(claims) {
							t.Errorf("%d claims listed; want %d: %s", len(rows), len(claims), r.Body)
						}
						for _, d := range rows {
							name, _ := d["domain"].(string)
							c, ok := claims[name]
							if !ok {
								t.Errorf("listed claim %v was not made here", d)
								continue
							}
							wsCheckClaim(t, d, name, c["mode"].(string), false)
							if d["id"] != c["id"] || d["dns_record"].(map[string]any)["value"] != c["dns_record"].(map[string]any)["value"] {
								t.Errorf("listed claim %v; want id and proof as created: %v", d, c)
							}
						}
					}},
				{name: "admin", method: "GET", path: domains, token: w.admin.Access, wantStatus: 200},
				{name: "member", method: "GET", path: domains, token: w.member.Access, wantStatus: 403},
				{name: "billing", method: "GET", path: domains, token: w.billing.Access, wantStatus: 403},
				{name: "stranger", method: "GET", path: domains, token: w.stranger.Access, wantStatus: 404},
				{name: "no token", method: "GET", path: domains, wantStatus: 401},
			})
		})

		t.Run("verification tokens differ between claims", func(t *testing.T) {
			values := map[string]string{}
			for name, c := range claims {
				v := c["dns_record"].(map[string]any)["value"].(string)
				if other, dup := values[v]; dup {
					t.Errorf("claims %s and %s share the proof %q", name, other, v)
				}
				values[v] = name
			}
		})

		t.Run("patch", func(t *testing.T) {
			id := claims[plain]["id"].(string)
			path := domains + "/" + id
			mode := func(m string) func(t *testing.T, r *testenv.Resp) {
				return func(t *testing.T, r *testenv.Resp) { wsCheckClaim(t, wsObj(t, r, "domain"), plain, m, false) }
			}
			rivalClaim := wsClaim(t, env, w.stranger.Access, rival, wsDomain(), "")["id"].(string)
			wsRun(t, env, []wsCase{
				{name: "to auto_join", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"mode": "auto_join"}, wantStatus: 200, wantBody: mode("auto_join")},
				{name: "same mode again", method: "PATCH", path: path, token: w.admin.Access, body: map[string]string{"mode": "auto_join"}, wantStatus: 200, wantBody: mode("auto_join")},
				{name: "back to suggest", method: "PATCH", path: path, token: w.admin.Access, body: map[string]string{"mode": "suggest"}, wantStatus: 200, wantBody: mode("suggest")},
				{name: "mode missing", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{}, wantStatus: 400},
				{name: "mode empty", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"mode": ""}, wantStatus: 400},
				{name: "mode unknown", method: "PATCH", path: path, token: w.owner.Access, body: map[string]string{"mode": "invite"}, wantStatus: 400},
				{name: "member", method: "PATCH", path: path, token: w.member.Access, body: map[string]string{"mode": "auto_join"}, wantStatus: 403},
				{name: "stranger", method: "PATCH", path: path, token: w.stranger.Access, body: map[string]string{"mode": "auto_join"}, wantStatus: 404},
				{name: "unknown claim", method: "PATCH", path: domains + "/" + uuid.NewString(), token: w.owner.Access, body: map[string]string{"mode": "auto_join"}, wantStatus: 404},
				{name: "another org's claim under this org", method: "PATCH", path: domains + "/" + rivalClaim, token: w.owner.Access, body: map[string]string{"mode": "auto_join"}, wantStatus: 404},
				{name: "no token", method: "PATCH", path: path, body: map[string]string{"mode": "auto_join"}, wantStatus: 401},
			})
		})

		t.Run("delete", func(t *testing.T) {
			id := claims[plain]["id"].(string)
			path := domains + "/" + id
			wsRun(t, env, []wsCase{
				{name: "member", method: "DELETE", path: path, token: w.member.Access, wantStatus: 403},
				{name: "stranger", method: "DELETE", path: path, token: w.stranger.Access, wantStatus: 404},
				{name: "no token", method: "DELETE", path: path, wantStatus: 401},
				{name: "owner", method: "DELETE", path: path, token: w.owner.Access, wantStatus: 200,
					wantBody: func(t *testing.T, r *testenv.Resp) { signinWantMessage(t, r) }},
				{name: "again", method: "DELETE", path: path, token: w.owner.Access, wantStatus: 404},
				{name: "unknown claim", method: "DELETE", path: domains + "/" + uuid.NewString(), token: w.owner.Access, wantStatus: 404},
				{name: "malformed id", method: "DELETE", path: domains + "/nope", token: w.owner.Access, wantStatus: 404},
				{name: "claim again after removal", method: "POST", path: domains, token: w.owner.Access, body: map[string]string{"domain": plain}, wantStatus: 200},
			})
			for _, d := range meList(t, wsDo(t, env, "GET", domains, w.owner.Access, nil).Want(t, 200), "domains") {
				if d["id"] == id {
					t.Errorf("removed claim %s still listed", id)
				}
			}
		})
	})
}

// TestWsDomainVerify covers "POST /v1/orgs/{id}/domains/{did}/verify"
// against a real DNS server (spec 3 Domain claim rows, 4.4 rule 3, section
// 7: missing or wrong record is 400 with a propagation hint, another org
// first is 409).
func TestWsDomainVerify(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := wsNewWorld(t, env)
		domain := wsDomain()
		c := wsClaim(t, env, w.owner.Access, w.org, domain, "")
		id := c["id"].(string)
		verify := "/v1/orgs/" + w.org + "/domains/" + id + "/verify"
		rec := c["dns_record"].(map[string]any)
		name, value := rec["name"].(string), rec["value"].(string)
		// A second org claims the same domain while neither has verified it.
		rival := meTeamOrg(t, env, "Rival", [2]string{w.stranger.UserID, "owner"})
		rc := wsClaim(t, env, w.stranger.Access, rival, domain, "")
		rivalValue := rc["dns_record"].(map[string]any)["value"].(string)
		third := meTeamOrg(t, env, "Third", [2]string{w.owner.UserID, "owner"})
		var verifiedAt any

		propagation := func(t *testing.T, r *testenv.Resp) {
			if !strings.Contains(strings.ToLower(r.Str("error")), "propagat") {
				t.Errorf("error = %q; want a hint that DNS changes take time to propagate", r.Str("error"))
			}
		}
		post := func(name, token string, want int, check func(t *testing.T, r *testenv.Resp)) wsCase {
			return wsCase{name: name, method: "POST", path: verify, token: token, wantStatus: want, wantBody: check}
		}
		wsRun(t, env, []wsCase{
			{name: "proofs of the two claims differ", method: "GET", path: "/v1/orgs/" + w.org + "/domains", token: w.owner.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					if value == rivalValue {
						t.Errorf("two claims of %s got the same proof %q", domain, value)
					}
				}},
			post("record missing", w.owner.Access, 400, propagation),
			{name: "wrong value", method: "POST", path: verify, token: w.owner.Access, wantStatus: 400, wantBody: propagation,
				before: func(t *testing.T) { env.DNS.SetTXT(name, "gatehouse-verification=wrong", "v=spf1 -all") }},
			{name: "the other org's proof", method: "POST", path: verify, token: w.owner.Access, wantStatus: 400, wantBody: propagation,
				before: func(t *testing.T) { env.DNS.SetTXT(name, rivalValue) }},
			{name: "still unverified after failures", method: "GET", path: "/v1/orgs/" + w.org + "/domains", token: w.owner.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					rows := meList(t, r, "domains")
					if len(rows) != 1 {
						t.Fatalf("domains = %v; want one", rows)
					}
					wsCheckClaim(t, rows[0], domain, "suggest", false)
				}},
			post("member", w.member.Access, 403, nil),
			post("billing", w.billing.Access, 403, nil),
			post("stranger", w.stranger.Access, 404, nil),
			post("no token", "", 401, nil),
			{name: "unknown claim", method: "POST", path: "/v1/orgs/" + w.org + "/domains/" + uuid.NewString() + "/verify", token: w.owner.Access, wantStatus: 404},
			{name: "another org's claim under this org", method: "POST", path: "/v1/orgs/" + w.org + "/domains/" + rc["id"].(string) + "/verify", token: w.owner.Access, wantStatus: 404},
			{name: "record published among others", method: "POST", path: verify, token: w.admin.Access, wantStatus: 200,
				before: func(t *testing.T) { env.DNS.SetTXT(name, "v=spf1 -all", value, rivalValue) },
				wantBody: func(t *testing.T, r *testenv.Resp) {
					wsCheckKeys(t, "verify answer", r.JSON(), "domain", "message")
					if msg, _ := r.Get("message").(string); msg == "" {
						t.Errorf("message = %#v; want a non-empty string", r.Get("message"))
					}
					d := wsObj(t, r, "domain")
					wsCheckClaim(t, d, domain, "suggest", true)
					verifiedAt = d["verified_at"]
				}},
			post("again: 200 unchanged", w.owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				d := wsObj(t, r, "domain")
				wsCheckClaim(t, d, domain, "suggest", true)
				if d["verified_at"] != verifiedAt {
					t.Errorf("verified_at = %v; want unchanged %v", d["verified_at"], verifiedAt)
				}
			}),
			{name: "list shows it verified, without the proof", method: "GET", path: "/v1/orgs/" + w.org + "/domains", token: w.owner.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					rows := meList(t, r, "domains")
					if len(rows) != 1 {
						t.Fatalf("domains = %v; want one", rows)
					}
					wsCheckClaim(t, rows[0], domain, "suggest", true)
				}},
			{name: "another org verified it first", method: "POST", path: "/v1/orgs/" + rival + "/domains/" + rc["id"].(string) + "/verify", token: w.stranger.Access, wantStatus: 409},
			{name: "a third org cannot claim it now", method: "POST", path: "/v1/orgs/" + third + "/domains", token: w.owner.Access, body: map[string]string{"domain": domain}, wantStatus: 409},
			{name: "the rival's claim stays unverified", method: "GET", path: "/v1/orgs/" + rival + "/domains", token: w.stranger.Access, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					for _, d := range meList(t, r, "domains") {
						if d["domain"] == domain && d["verified"] != false {
							t.Errorf("rival claim %v; want unverified", d)
						}
					}
				}},
			{name: "owner removes the verified claim", method: "DELETE", path: "/v1/orgs/" + w.org + "/domains/" + id, token: w.owner.Access, wantStatus: 200},
			{name: "the domain is free for another org", method: "POST", path: "/v1/orgs/" + third + "/domains", token: w.owner.Access, body: map[string]string{"domain": domain}, wantStatus: 200,
				wantBody: func(t *testing.T, r *testenv.Resp) {
					d := wsObj(t, r, "domain")
					wsCheckClaim(t, d, domain, "suggest", false)
					wsPublish(t, env, d)
					r = wsDo(t, env, "POST", "/v1/orgs/"+third+"/domains/"+d["id"].(string)+"/verify", w.owner.Access, nil).Want(t, 200)
					wsCheckClaim(t, wsObj(t, r, "domain"), domain, "suggest", true)
				}},
		})
	})
}
