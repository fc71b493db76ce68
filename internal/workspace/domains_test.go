package workspace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// checkClaim checks a Domain claim record (CONTRACT §3): while unverified
// it carries dns_record {type TXT, name _service.<domain>, value}; once
// verified, verified_at is set and dns_record is null.
func checkClaim(t *testing.T, d map[string]any, domain, mode string, verified bool) {
	t.Helper()
	testenv.CheckKeys(t, "domain", d, "id", "domain", "mode", "verified", "verified_at", "created_at", "dns_record")
	if id, _ := d["id"].(string); !testenv.IsUUID(id) {
		t.Errorf("domain.id = %#v; want a uuid", d["id"])
	}
	if d["domain"] != domain || d["mode"] != mode || d["verified"] != verified {
		t.Errorf("domain, mode, verified = %v, %v, %v; want %s, %s, %v", d["domain"], d["mode"], d["verified"], domain, mode, verified)
	}
	testenv.Time(t, "domain.created_at", d["created_at"])
	if verified {
		testenv.Time(t, "domain.verified_at", d["verified_at"])
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
	testenv.CheckKeys(t, "dns_record", rec, "type", "name", "value")
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
		w := env.NewWorld(t)
		domains := "/v1/orgs/" + w.Org + "/domains"
		rnd := testenv.RandomHex(4)
		plain := testenv.Domain()
		// A domain another org verified already.
		rival := env.TeamOrg(t, "Rival", [2]string{w.Stranger.UserID, "owner"})
		taken := testenv.Domain()
		env.VerifiedDomain(t, w.Stranger.Access, rival, taken, "")
		claims := map[string]map[string]any{} // domain → claim answer

		claimed := func(domain, mode string) func(t *testing.T, r *testenv.Resp) {
			return func(t *testing.T, r *testenv.Resp) {
				t.Helper()
				d := r.Obj(t, "domain")
				checkClaim(t, d, domain, mode, false)
				claims[domain] = d
			}
		}
		post := func(name, token string, body any, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "POST", Path: domains, Token: token, Body: body, Want: want, Check: check}
		}

		t.Run("create", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				post("plain domain, mode defaults to suggest", w.Owner.Access, map[string]string{"domain": plain}, 200, claimed(plain, "suggest")),
				post("normalized: scheme, www, case, path, trailing dot", w.Owner.Access, map[string]string{"domain": "https://www.Example-" + rnd + ".test/path."}, 200, claimed("example-"+rnd+".test", "suggest")),
				post("normalized: trailing dot", w.Owner.Access, map[string]string{"domain": "Dot-" + rnd + ".test."}, 200, claimed("dot-"+rnd+".test", "suggest")),
				post("auto_join by an admin", w.Admin.Access, map[string]string{"domain": "auto-" + rnd + ".test", "mode": "auto_join"}, 200, claimed("auto-"+rnd+".test", "auto_join")),
				post("gmail.com", w.Owner.Access, map[string]string{"domain": "gmail.com"}, 400, nil),
				post("outlook.com", w.Owner.Access, map[string]string{"domain": "outlook.com"}, 400, nil),
				post("yahoo.com", w.Owner.Access, map[string]string{"domain": "yahoo.com"}, 400, nil),
				post("public provider spelled as a URL", w.Owner.Access, map[string]string{"domain": "https://www.GMAIL.com/"}, 400, nil),
				post("not a domain", w.Owner.Access, map[string]string{"domain": "not a domain"}, 400, nil),
				post("single label", w.Owner.Access, map[string]string{"domain": "localhost"}, 400, nil),
				post("IP address", w.Owner.Access, map[string]string{"domain": "10.0.0.1"}, 400, nil),
				post("empty domain", w.Owner.Access, map[string]string{"domain": ""}, 400, nil),
				post("domain missing", w.Owner.Access, map[string]string{"mode": "suggest"}, 400, nil),
				post("mode unknown", w.Owner.Access, map[string]string{"domain": "mode-" + rnd + ".test", "mode": "invite"}, 400, nil),
				post("same domain again", w.Owner.Access, map[string]string{"domain": plain}, 409, nil),
				post("same domain again, spelled differently", w.Admin.Access, map[string]string{"domain": "http://WWW." + strings.ToUpper(plain) + "/x"}, 409, nil),
				post("verified by another org", w.Owner.Access, map[string]string{"domain": taken}, 409, nil),
				post("member", w.Member.Access, map[string]string{"domain": "m-" + rnd + ".test"}, 403, nil),
				post("billing", w.Billing.Access, map[string]string{"domain": "b-" + rnd + ".test"}, 403, nil),
				post("stranger", w.Stranger.Access, map[string]string{"domain": "s-" + rnd + ".test"}, 404, nil),
				post("no token", "", map[string]string{"domain": "n-" + rnd + ".test"}, 401, nil),
				{Name: "personal org", Method: "POST", Path: "/v1/orgs/" + w.Owner.OrgID + "/domains", Token: w.Owner.Access, Body: map[string]string{"domain": "p-" + rnd + ".test"}, Want: 403},
			})
		})

		t.Run("list", func(t *testing.T) {
			env.RunCases(t, []testenv.Case{
				{Name: "owner", Method: "GET", Path: domains, Token: w.Owner.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) {
						rows := r.List(t, "domains")
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
							checkClaim(t, d, name, c["mode"].(string), false)
							if d["id"] != c["id"] || d["dns_record"].(map[string]any)["value"] != c["dns_record"].(map[string]any)["value"] {
								t.Errorf("listed claim %v; want id and proof as created: %v", d, c)
							}
						}
					}},
				{Name: "admin", Method: "GET", Path: domains, Token: w.Admin.Access, Want: 200},
				{Name: "member", Method: "GET", Path: domains, Token: w.Member.Access, Want: 403},
				{Name: "billing", Method: "GET", Path: domains, Token: w.Billing.Access, Want: 403},
				{Name: "stranger", Method: "GET", Path: domains, Token: w.Stranger.Access, Want: 404},
				{Name: "no token", Method: "GET", Path: domains, Want: 401},
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
				return func(t *testing.T, r *testenv.Resp) { checkClaim(t, r.Obj(t, "domain"), plain, m, false) }
			}
			rivalClaim := env.ClaimDomain(t, w.Stranger.Access, rival, testenv.Domain(), "")["id"].(string)
			env.RunCases(t, []testenv.Case{
				{Name: "to auto_join", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"mode": "auto_join"}, Want: 200, Check: mode("auto_join")},
				{Name: "same mode again", Method: "PATCH", Path: path, Token: w.Admin.Access, Body: map[string]string{"mode": "auto_join"}, Want: 200, Check: mode("auto_join")},
				{Name: "back to suggest", Method: "PATCH", Path: path, Token: w.Admin.Access, Body: map[string]string{"mode": "suggest"}, Want: 200, Check: mode("suggest")},
				{Name: "mode missing", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{}, Want: 400},
				{Name: "mode empty", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"mode": ""}, Want: 400},
				{Name: "mode unknown", Method: "PATCH", Path: path, Token: w.Owner.Access, Body: map[string]string{"mode": "invite"}, Want: 400},
				{Name: "member", Method: "PATCH", Path: path, Token: w.Member.Access, Body: map[string]string{"mode": "auto_join"}, Want: 403},
				{Name: "stranger", Method: "PATCH", Path: path, Token: w.Stranger.Access, Body: map[string]string{"mode": "auto_join"}, Want: 404},
				{Name: "unknown claim", Method: "PATCH", Path: domains + "/" + uuid.NewString(), Token: w.Owner.Access, Body: map[string]string{"mode": "auto_join"}, Want: 404},
				{Name: "another org's claim under this org", Method: "PATCH", Path: domains + "/" + rivalClaim, Token: w.Owner.Access, Body: map[string]string{"mode": "auto_join"}, Want: 404},
				{Name: "no token", Method: "PATCH", Path: path, Body: map[string]string{"mode": "auto_join"}, Want: 401},
			})
		})

		t.Run("delete", func(t *testing.T) {
			id := claims[plain]["id"].(string)
			path := domains + "/" + id
			env.RunCases(t, []testenv.Case{
				{Name: "member", Method: "DELETE", Path: path, Token: w.Member.Access, Want: 403},
				{Name: "stranger", Method: "DELETE", Path: path, Token: w.Stranger.Access, Want: 404},
				{Name: "no token", Method: "DELETE", Path: path, Want: 401},
				{Name: "owner", Method: "DELETE", Path: path, Token: w.Owner.Access, Want: 200,
					Check: func(t *testing.T, r *testenv.Resp) { testenv.WantMessage(t, r) }},
				{Name: "again", Method: "DELETE", Path: path, Token: w.Owner.Access, Want: 404},
				{Name: "unknown claim", Method: "DELETE", Path: domains + "/" + uuid.NewString(), Token: w.Owner.Access, Want: 404},
				{Name: "malformed id", Method: "DELETE", Path: domains + "/nope", Token: w.Owner.Access, Want: 404},
				{Name: "claim again after removal", Method: "POST", Path: domains, Token: w.Owner.Access, Body: map[string]string{"domain": plain}, Want: 200},
			})
			for _, d := range env.Call(t, "GET", domains, w.Owner.Access, nil).Want(t, 200).List(t, "domains") {
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
		w := env.NewWorld(t)
		domain := testenv.Domain()
		c := env.ClaimDomain(t, w.Owner.Access, w.Org, domain, "")
		id := c["id"].(string)
		verify := "/v1/orgs/" + w.Org + "/domains/" + id + "/verify"
		rec := c["dns_record"].(map[string]any)
		name, value := rec["name"].(string), rec["value"].(string)
		// A second org claims the same domain while neither has verified it.
		rival := env.TeamOrg(t, "Rival", [2]string{w.Stranger.UserID, "owner"})
		rc := env.ClaimDomain(t, w.Stranger.Access, rival, domain, "")
		rivalValue := rc["dns_record"].(map[string]any)["value"].(string)
		third := env.TeamOrg(t, "Third", [2]string{w.Owner.UserID, "owner"})
		var verifiedAt any

		propagation := func(t *testing.T, r *testenv.Resp) {
			if !strings.Contains(strings.ToLower(r.Str("error")), "propagat") {
				t.Errorf("error = %q; want a hint that DNS changes take time to propagate", r.Str("error"))
			}
		}
		post := func(name, token string, want int, check func(t *testing.T, r *testenv.Resp)) testenv.Case {
			return testenv.Case{Name: name, Method: "POST", Path: verify, Token: token, Want: want, Check: check}
		}
		env.RunCases(t, []testenv.Case{
			{Name: "proofs of the two claims differ", Method: "GET", Path: "/v1/orgs/" + w.Org + "/domains", Token: w.Owner.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					if value == rivalValue {
						t.Errorf("two claims of %s got the same proof %q", domain, value)
					}
				}},
			post("record missing", w.Owner.Access, 400, propagation),
			{Name: "wrong value", Method: "POST", Path: verify, Token: w.Owner.Access, Want: 400, Check: propagation,
				Before: func(t *testing.T) { env.DNS.SetTXT(name, "gatehouse-verification=wrong", "v=spf1 -all") }},
			{Name: "the other org's proof", Method: "POST", Path: verify, Token: w.Owner.Access, Want: 400, Check: propagation,
				Before: func(t *testing.T) { env.DNS.SetTXT(name, rivalValue) }},
			{Name: "still unverified after failures", Method: "GET", Path: "/v1/orgs/" + w.Org + "/domains", Token: w.Owner.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					rows := r.List(t, "domains")
					if len(rows) != 1 {
						t.Fatalf("domains = %v; want one", rows)
					}
					checkClaim(t, rows[0], domain, "suggest", false)
				}},
			post("member", w.Member.Access, 403, nil),
			post("billing", w.Billing.Access, 403, nil),
			post("stranger", w.Stranger.Access, 404, nil),
			post("no token", "", 401, nil),
			{Name: "unknown claim", Method: "POST", Path: "/v1/orgs/" + w.Org + "/domains/" + uuid.NewString() + "/verify", Token: w.Owner.Access, Want: 404},
			{Name: "another org's claim under this org", Method: "POST", Path: "/v1/orgs/" + w.Org + "/domains/" + rc["id"].(string) + "/verify", Token: w.Owner.Access, Want: 404},
			{Name: "record published among others", Method: "POST", Path: verify, Token: w.Admin.Access, Want: 200,
				Before: func(t *testing.T) { env.DNS.SetTXT(name, "v=spf1 -all", value, rivalValue) },
				Check: func(t *testing.T, r *testenv.Resp) {
					testenv.CheckKeys(t, "verify answer", r.JSON(), "domain", "message")
					if msg, _ := r.Get("message").(string); msg == "" {
						t.Errorf("message = %#v; want a non-empty string", r.Get("message"))
					}
					d := r.Obj(t, "domain")
					checkClaim(t, d, domain, "suggest", true)
					verifiedAt = d["verified_at"]
				}},
			post("again: 200 unchanged", w.Owner.Access, 200, func(t *testing.T, r *testenv.Resp) {
				d := r.Obj(t, "domain")
				checkClaim(t, d, domain, "suggest", true)
				if d["verified_at"] != verifiedAt {
					t.Errorf("verified_at = %v; want unchanged %v", d["verified_at"], verifiedAt)
				}
			}),
			{Name: "list shows it verified, without the proof", Method: "GET", Path: "/v1/orgs/" + w.Org + "/domains", Token: w.Owner.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					rows := r.List(t, "domains")
					if len(rows) != 1 {
						t.Fatalf("domains = %v; want one", rows)
					}
					checkClaim(t, rows[0], domain, "suggest", true)
				}},
			{Name: "another org verified it first", Method: "POST", Path: "/v1/orgs/" + rival + "/domains/" + rc["id"].(string) + "/verify", Token: w.Stranger.Access, Want: 409},
			{Name: "a third org cannot claim it now", Method: "POST", Path: "/v1/orgs/" + third + "/domains", Token: w.Owner.Access, Body: map[string]string{"domain": domain}, Want: 409},
			{Name: "the rival's claim stays unverified", Method: "GET", Path: "/v1/orgs/" + rival + "/domains", Token: w.Stranger.Access, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					for _, d := range r.List(t, "domains") {
						if d["domain"] == domain && d["verified"] != false {
							t.Errorf("rival claim %v; want unverified", d)
						}
					}
				}},
			{Name: "owner removes the verified claim", Method: "DELETE", Path: "/v1/orgs/" + w.Org + "/domains/" + id, Token: w.Owner.Access, Want: 200},
			{Name: "the domain is free for another org", Method: "POST", Path: "/v1/orgs/" + third + "/domains", Token: w.Owner.Access, Body: map[string]string{"domain": domain}, Want: 200,
				Check: func(t *testing.T, r *testenv.Resp) {
					d := r.Obj(t, "domain")
					checkClaim(t, d, domain, "suggest", false)
					env.PublishProof(t, d)
					r = env.Call(t, "POST", "/v1/orgs/"+third+"/domains/"+d["id"].(string)+"/verify", w.Owner.Access, nil).Want(t, 200)
					checkClaim(t, r.Obj(t, "domain"), domain, "suggest", true)
				}},
		})
	})
}

// TestDeleteRacesAnswer404 checks that concurrent deletes and updates of
// one domain claim or team answer 200 or 404, never 500.
func TestDeleteRacesAnswer404(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		for round := range 3 {
			claim := env.Do(t, "POST", "/v1/orgs/"+org+"/domains", owner.Token, map[string]string{"domain": testenv.Domain()}).Want(t, 200).Str("domain.id")
			team := env.CreateTeam(t, owner.Token, org, fmt.Sprintf("Team %d", round))
			rs := testenv.AtOnceAnswers(20, func(i int) *testenv.Resp {
				switch i % 4 {
				case 0:
					return env.Do(t, "DELETE", "/v1/orgs/"+org+"/domains/"+claim, owner.Token, nil)
				case 1:
					return env.Do(t, "PATCH", "/v1/orgs/"+org+"/domains/"+claim, owner.Token, map[string]string{"mode": "auto_join"})
				case 2:
					return env.Do(t, "DELETE", "/v1/orgs/"+org+"/teams/"+team, owner.Token, nil)
				}
				return env.Do(t, "PATCH", "/v1/orgs/"+org+"/teams/"+team, owner.Token, map[string]string{"name": fmt.Sprintf("Renamed %d", i)})
			})
			for i, r := range rs {
				if r.Status != 200 && r.Status != 404 {
					t.Errorf("round %d request %d: %d %s; want 200 or 404", round, i, r.Status, r.Body)
				}
			}
		}
	})
}
