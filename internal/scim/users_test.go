package scim_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestScimOktaSequence replays what Okta sends: its validator's discovery
// reads, a lookup by userName before create, create, read, deactivation
// and reactivation by PATCH with a value object, PUT, delete; each answer
// checked against RFC 7644 (status, media type, resource shape, errors).
func TestScimOktaSequence(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
		d, tokenID := newDirectory(t, env, w.Owner.Access, w.Org)

		spc := d.do(t, "GET", "/ServiceProviderConfig", nil).Want(t, 200)
		if spc.Get("patch.supported") != true || spc.Get("filter.supported") != true {
			t.Errorf("ServiceProviderConfig = %s; want patch and filter supported", spc.Body)
		}
		if total(t, d.do(t, "GET", "/ResourceTypes", nil).Want(t, 200)) != 2 || total(t, d.do(t, "GET", "/Schemas", nil).Want(t, 200)) != 3 {
			t.Errorf("ResourceTypes or Schemas: unexpected totals")
		}
		d.do(t, "GET", "/Nope", nil).Want(t, 404)

		email := "ada-" + testenv.RandomHex(4) + "@" + domain
		if n := total(t, d.users(t, `userName eq "`+email+`"`, "startIndex=1", "count=100")); n != 0 {
			t.Fatalf("lookup before create found %d users; want 0", n)
		}
		r := d.do(t, "POST", "/Users", userBody(email, "00u1okta", true)).Want(t, 201)
		id := r.Str("id")
		if !testenv.IsUUID(id) || r.Str("userName") != email || r.Get("active") != true || r.Str("meta.resourceType") != "User" {
			t.Fatalf("create answered %s", r.Body)
		}
		if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, "/scim/v2/Users/"+id) || r.Str("meta.location") != loc {
			t.Errorf("Location %q, meta.location %q; want …/scim/v2/Users/%s", loc, r.Str("meta.location"), id)
		}
		if r.Str("name.givenName") != "Ada" || first(r, "emails", "value") != email {
			t.Errorf("create did not keep name and emails: %s", r.Body)
		}
		// In a verified domain: an account, no password, unverified, a
		// member with the provisioning role.
		acct, verified, password := accountOf(t, env, email)
		if acct == "" || verified || password != "" {
			t.Fatalf("account of %s: id %q verified %v password set %v; want an unverified account without password", email, acct, verified, password != "")
		}
		if role := env.Role(t, w.Org, acct); role != "member" {
			t.Errorf("provisioned role = %q; want member", role)
		}
		// The same userName again: 409 uniqueness.
		dup := d.do(t, "POST", "/Users", userBody(strings.ToUpper(email), "00u2okta", true)).Want(t, 409)
		if dup.Str("scimType") != "uniqueness" {
			t.Errorf("duplicate: scimType %q; want uniqueness", dup.Str("scimType"))
		}
		if n := total(t, d.users(t, `userName eq "`+strings.ToUpper(email)+`"`)); n != 1 {
			t.Errorf("lookup after create found %d; want 1 (userName is case-insensitive)", n)
		}
		d.do(t, "GET", "/Users/"+id, nil).Want(t, 200)
		d.do(t, "GET", "/Users/"+uuid.NewString(), nil).Want(t, 404)
		d.do(t, "GET", "/Users/not-an-id", nil).Want(t, 404)

		// Okta deactivates with a value object.
		r = d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "replace", "value": map[string]any{"active": false}})).Want(t, 200)
		if r.Get("active") != false {
			t.Fatalf("deactivate answered %s", r.Body)
		}
		if role := env.Role(t, w.Org, acct); role != "" {
			t.Errorf("after active false the role is %q; want no membership", role)
		}
		r = d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "replace", "value": map[string]any{"active": true}})).Want(t, 200)
		if role := env.Role(t, w.Org, acct); r.Get("active") != true || role != "member" {
			t.Errorf("after reactivation: active %v, role %q; want true, member", r.Get("active"), role)
		}

		put := userBody(email, "00u1okta", true)
		put["displayName"] = "Ada King"
		put["name"] = map[string]any{"givenName": "Ada", "familyName": "King"}
		r = d.do(t, "PUT", "/Users/"+id, put).Want(t, 200)
		if r.Str("displayName") != "Ada King" || r.Str("name.familyName") != "King" {
			t.Errorf("PUT answered %s", r.Body)
		}
		bad := d.do(t, "PUT", "/Users/"+id, map[string]any{"userName": "not an address"}).Want(t, 400)
		if bad.Str("scimType") != "invalidValue" {
			t.Errorf("bad userName: scimType %q; want invalidValue", bad.Str("scimType"))
		}
		d.do(t, "DELETE", "/Users/"+id, nil).Want(t, 204)
		d.do(t, "GET", "/Users/"+id, nil).Want(t, 404)
		if role := env.Role(t, w.Org, acct); role != "" {
			t.Errorf("after DELETE the role is %q; want no membership", role)
		}
		if a2, _, _ := accountOf(t, env, email); a2 != acct {
			t.Errorf("DELETE removed the account; want it kept")
		}
		es := env.Audit(t, w.Owner.Access, w.Org, "limit=500")
		scim := 0
		for _, e := range es {
			if e["actor_id"] == "scim:"+tokenID {
				scim++
				testenv.CheckEntry(t, e)
			}
		}
		if scim < 6 {
			t.Errorf("%d audit entries by scim:%s; want every change (at least 6)", scim, tokenID)
		}
	})
}

// TestScimEntraSequence replays what Microsoft Entra sends: a lookup by
// externalId, create with the enterprise extension, PATCH with ops in
// capitals, booleans as strings, filtered paths, URN paths and an op
// without a path, then deactivation by "False".
func TestScimEntraSequence(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		email := "grace-" + testenv.RandomHex(4) + "@" + domain
		ext := "e-" + testenv.RandomHex(6)
		if n := total(t, d.users(t, `externalId eq "`+ext+`"`)); n != 0 {
			t.Fatalf("lookup before create found %d", n)
		}
		body := userBody(email, ext, true)
		body["schemas"] = []string{"urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"}
		body["active"] = "True"
		body["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"] = map[string]any{"employeeNumber": "42", "department": "Navy"}
		r := d.do(t, "POST", "/Users", body).Want(t, 201)
		id := r.Str("id")
		if r.Get("active") != true {
			t.Errorf(`active "True" created %v; want true`, r.Get("active"))
		}
		if n := total(t, d.users(t, `externalId eq "`+ext+`"`)); n != 1 {
			t.Fatalf("lookup by externalId found %d; want 1", n)
		}
		r = d.do(t, "PATCH", "/Users/"+id, patch(
			map[string]any{"op": "Replace", "path": `emails[type eq "work"].value`, "value": "grace.hopper@" + domain},
			map[string]any{"op": "Add", "path": `phoneNumbers[type eq "mobile"].value`, "value": "+1 555 0100"},
			map[string]any{"op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Research"},
			map[string]any{"op": "replace", "value": map[string]any{"displayName": "Grace Hopper", "name.givenName": "Grace",
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager": map[string]any{"value": "m-1"}}},
		)).Want(t, 200)
		ent, _ := r.JSON()["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"].(map[string]any)
		if first(r, "emails", "value") != "grace.hopper@"+domain || first(r, "phoneNumbers", "value") != "+1 555 0100" || first(r, "phoneNumbers", "type") != "mobile" ||
			r.Str("displayName") != "Grace Hopper" || r.Str("name.givenName") != "Grace" || ent["department"] != "Research" || ent["employeeNumber"] != "42" {
			t.Errorf("Entra PATCH answered %s", r.Body)
		}
		if m, _ := ent["manager"].(map[string]any); m["value"] != "m-1" {
			t.Errorf("manager = %v; want value m-1", ent["manager"])
		}
		acct, _, _ := accountOf(t, env, email)
		r = d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "Replace", "path": "active", "value": "False"})).Want(t, 200)
		if r.Get("active") != false || env.Role(t, w.Org, acct) != "" {
			t.Errorf(`active "False": active %v, role %q; want false, none`, r.Get("active"), env.Role(t, w.Org, acct))
		}
		r = d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "Remove", "path": `phoneNumbers[type eq "mobile"]`})).Want(t, 200)
		if ph, _ := r.Get("phoneNumbers").([]any); len(ph) != 0 {
			t.Errorf("remove by filter left %v", r.Get("phoneNumbers"))
		}
		for _, c := range []struct {
			name string
			body map[string]any
			code string
		}{
			{"unknown op", patch(map[string]any{"op": "move", "path": "active", "value": true}), "invalidSyntax"},
			{"remove without path", patch(map[string]any{"op": "remove"}), "noTarget"},
			{"bad path", patch(map[string]any{"op": "replace", "path": "emails[type eq", "value": "x"}), "invalidPath"},
			{"bad active", patch(map[string]any{"op": "replace", "path": "active", "value": "perhaps"}), "invalidValue"},
			{"no operations", patch(), "invalidSyntax"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := d.do(t, "PATCH", "/Users/"+id, c.body).Want(t, 400)
				if r.Str("scimType") != c.code {
					t.Errorf("scimType %q; want %s", r.Str("scimType"), c.code)
				}
			})
		}
	})
}

// TestScimListFilters covers filter (eq, co, sw, pr, and, or, not on
// userName, externalId, emails.value, displayName, active), startIndex and
// count, attributes and excludedAttributes, and invalid filters.
func TestScimListFilters(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		tag := testenv.RandomHex(4)
		mk := func(local, display, ext string, active bool) {
			b := userBody(local+"-"+tag+"@outside.test", ext, active)
			b["displayName"] = display
			d.do(t, "POST", "/Users", b).Want(t, 201)
		}
		mk("alice", "Alice Archer", "x1", true)
		mk("bob", "Bob Baker", "x2", false)
		mk("carol", "Carol Archer", "", true)
		for _, c := range []struct {
			filter string
			want   int
		}{
			{`userName eq "alice-` + tag + `@outside.test"`, 1},
			{`userName sw "b"`, 1},
			{`userName co "` + tag + `"`, 3},
			{`displayName co "archer"`, 2},
			{`emails.value eq "carol-` + tag + `@outside.test"`, 1},
			{`emails[type eq "work"]`, 3},
			{`externalId pr`, 2},
			{`active eq true`, 2},
			{`active eq false and displayName sw "Bob"`, 1},
			{`externalId eq "x1" or externalId eq "x2"`, 2},
			{`not (active eq true)`, 1},
			{`(displayName co "Archer" and active eq true) or userName sw "bob"`, 3},
			{`externalId eq "X1"`, 0},
		} {
			t.Run(c.filter, func(t *testing.T) {
				if n := total(t, d.users(t, c.filter)); n != c.want {
					t.Errorf("totalResults %d; want %d", n, c.want)
				}
			})
		}
		r := d.do(t, "GET", "/Users?startIndex=2&count=1", nil).Want(t, 200)
		if total(t, r) != 3 || r.Get("startIndex") != float64(2) || r.Get("itemsPerPage") != float64(1) || len(r.List(t, "Resources")) != 1 {
			t.Errorf("page 2 of 1: %s", r.Body)
		}
		if got := r.List(t, "Resources")[0]["userName"]; got != "bob-"+tag+"@outside.test" {
			t.Errorf("second user %v; want bob (oldest first)", got)
		}
		r = d.do(t, "GET", "/Users?count=0", nil).Want(t, 200)
		if total(t, r) != 3 || len(r.List(t, "Resources")) != 0 {
			t.Errorf("count=0: %s", r.Body)
		}
		u := d.users(t, `userName sw "alice"`, "attributes=userName").List(t, "Resources")[0]
		if _, ok := u["emails"]; ok || u["userName"] == nil || u["id"] == nil || u["meta"] == nil {
			t.Errorf("attributes=userName answered %v", u)
		}
		u = d.users(t, `userName sw "alice"`, "excludedAttributes=emails,name").List(t, "Resources")[0]
		if _, ok := u["emails"]; ok || u["displayName"] == nil {
			t.Errorf("excludedAttributes=emails,name answered %v", u)
		}
		for _, f := range []string{`userName eq`, `userName zz "x"`, `(userName eq "x"`, `userName eq "x" and`, `"x" eq userName`} {
			r := d.do(t, "GET", "/Users?filter="+urlQuery(f), nil).Want(t, 400)
			if r.Str("scimType") != "invalidFilter" {
				t.Errorf("filter %q: scimType %q; want invalidFilter", f, r.Str("scimType"))
			}
		}
	})
}
