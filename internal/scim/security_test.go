package scim_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// magicSignIn proves email's mailbox by a magic link and returns the
// session answer.
func magicSignIn(t *testing.T, env *testenv.Env, email string) *testenv.Resp {
	t.Helper()
	tok := env.MagicToken(t, email)
	return env.Call(t, "POST", "/v1/auth/magic-link/verify", "", map[string]string{"token": tok}).Want(t, 200)
}

// TestScimAcrossWorkspaces: a SCIM token of workspace A can neither read
// nor touch workspace B's directory users.
func TestScimAcrossWorkspaces(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a, b := env.NewWorld(t), env.NewWorld(t)
		da, _ := newDirectory(t, env, a.Owner.Access, a.Org)
		db, _ := newDirectory(t, env, b.Owner.Access, b.Org)
		email := "bea-" + testenv.RandomHex(4) + "@outside.test"
		id := db.do(t, "POST", "/Users", userBody(email, "b1", true)).Want(t, 201).Str("id")
		da.do(t, "GET", "/Users/"+id, nil).Want(t, 404)
		da.do(t, "PUT", "/Users/"+id, userBody(email, "b1", false)).Want(t, 404)
		da.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "replace", "path": "active", "value": false})).Want(t, 404)
		da.do(t, "DELETE", "/Users/"+id, nil).Want(t, 404)
		if n := total(t, da.users(t, `userName eq "`+email+`"`)); n != 0 {
			t.Errorf("A's token lists %d of B's users; want 0", n)
		}
		if n := total(t, da.do(t, "GET", "/Users", nil).Want(t, 200)); n != 0 {
			t.Errorf("A's directory lists %d users; want 0", n)
		}
		// The same address in A is A's own directory user.
		da.do(t, "POST", "/Users", userBody(email, "a1", true)).Want(t, 201)
		if r := db.do(t, "GET", "/Users/"+id, nil).Want(t, 200); r.Get("active") != true || r.Str("externalId") != "b1" {
			t.Errorf("B's user changed: %s", r.Body)
		}
		// A's owner cannot manage B's tokens.
		env.Do(t, "GET", "/v1/orgs/"+b.Org+"/scim-tokens", a.Owner.Access, nil).Want(t, 404)
	})
}

// TestScimOutsideDomainsGrantsNothing: an address outside the workspace's
// verified domains creates no account and no membership; whoever proves
// the address (a magic link) then joins, as a member. An existing account
// of such an address (a member of another workspace) is never reached:
// not joined, not renamed, not removed from its workspace. A password in
// the resource is ignored.
func TestScimOutsideDomainsGrantsNothing(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w, other := env.NewWorld(t), env.NewWorld(t)
		env.VerifiedDomain(t, w.Owner.Access, w.Org, testenv.Domain(), "suggest")
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)

		email := "pending-" + testenv.RandomHex(4) + "@elsewhere.test"
		body := userBody(email, "p1", true)
		body["password"] = "chosen-by-the-directory"
		id := d.do(t, "POST", "/Users", body).Want(t, 201).Str("id")
		if _, ok := env.Do(t, "GET", "/scim/v2/Users/"+id, d.token, nil).JSON()["password"]; ok {
			t.Errorf("the resource shows a password")
		}
		if acct, _, _ := accountOf(t, env, email); acct != "" {
			t.Fatalf("an account was created for an address outside the verified domains")
		}
		s := magicSignIn(t, env, email)
		uid := s.Str("user.id")
		if role := env.Role(t, w.Org, uid); role != "member" {
			t.Errorf("after proving the address the role is %q; want member", role)
		}
		if _, _, pw := accountOf(t, env, email); pw != "" {
			t.Errorf("the provisioned account has a password")
		}

		// A member of another workspace, verified, named by the directory.
		victim := other.Member
		env.VerifyEmail(t, victim)
		vid := d.do(t, "POST", "/Users", userBody(victim.Email, "v1", true)).Want(t, 201).Str("id")
		if role := env.Role(t, w.Org, victim.UserID); role != "" {
			t.Errorf("the other workspace's member joined with role %q; want nothing", role)
		}
		magicSignIn(t, env, victim.Email) // an address proven before: no new proof
		if role := env.Role(t, w.Org, victim.UserID); role != "" {
			t.Errorf("after a later sign-in the victim joined with role %q; want nothing", role)
		}
		d.do(t, "PATCH", "/Users/"+vid, patch(map[string]any{"op": "replace", "value": map[string]any{"displayName": "Renamed", "active": false}})).Want(t, 200)
		d.do(t, "DELETE", "/Users/"+vid, nil).Want(t, 204)
		me := env.Do(t, "GET", "/v1/auth/me", victim.Access, nil).Want(t, 200)
		if me.Str("user.name") == "Renamed" {
			t.Errorf("the directory renamed another workspace's account")
		}
		if role := env.Role(t, other.Org, victim.UserID); role != "member" {
			t.Errorf("the victim's role in their own workspace is %q; want member", role)
		}
	})
}

// TestScimSquatterNotLinked: an unverified account registered with a
// password at an address of the verified domain is not linked (whoever
// registered it may not own the mailbox); the mailbox's owner's proof
// takes the account over (its password removed) and joins the workspace.
func TestScimSquatterNotLinked(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		squatter := env.RegisterAt(t, domain)
		d.do(t, "POST", "/Users", userBody(squatter.Email, "s1", true)).Want(t, 201)
		if role := env.Role(t, w.Org, squatter.UserID); role != "" {
			t.Fatalf("an unverified account joined with role %q; want nothing until its address is proven", role)
		}
		tok := env.Login(t, squatter.Email, squatter.Password).Want(t, 200).Str("access_token")
		env.Do(t, "POST", "/v1/auth/switch-org", tok, map[string]string{"org_id": w.Org}).Want(t, 403)
		magicSignIn(t, env, squatter.Email)
		if role := env.Role(t, w.Org, squatter.UserID); role != "member" {
			t.Errorf("after the owner's proof the role is %q; want member", role)
		}
		env.Login(t, squatter.Email, squatter.Password).Want(t, 401)
	})
}

// TestScimDeprovisionEverywhere: a provisioned member signed in on three
// instances is refused in the workspace on each within 2 s of active
// false, the keys they made there are revoked, their own workspace is
// untouched; reactivation restores the membership, not the keys.
func TestScimDeprovisionEverywhere(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		instances := []*testenv.Env{env, env.Another(t), env.Another(t)}
		w := env.NewWorld(t)
		domain := testenv.Domain()
		env.VerifiedDomain(t, w.Owner.Access, w.Org, domain, "suggest")
		d, _ := newDirectory(t, env, w.Owner.Access, w.Org)
		person := env.VerifiedAt(t, domain)
		id := d.do(t, "POST", "/Users", userBody(person.Email, "d1", true)).Want(t, 201).Str("id")
		if role := env.Role(t, w.Org, person.UserID); role != "member" {
			t.Fatalf("verified account in the domain: role %q; want member", role)
		}
		orgTok := orgToken(t, env, person.Access, w.Org)
		key := env.CreateUserKey(t, person.Access, map[string]any{"name": "laptop", "org_id": w.Org}).Str("api_key.secret")
		keyTok := env.Exchange(t, key).Want(t, 200).Str("access_token")
		paths := []string{"/v1/orgs/" + w.Org, "/tasks/v1/issues"}
		for i, in := range instances {
			for _, p := range paths {
				for _, tk := range []string{orgTok, keyTok} {
					if r := in.Call(t, "GET", p, tk, nil); r.Status != 200 {
						t.Fatalf("instance %d: GET %s before = %d %s", i, p, r.Status, r.Body)
					}
				}
			}
		}
		d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "replace", "value": map[string]any{"active": false}})).Want(t, 200)
		for i, in := range instances {
			for _, p := range paths {
				for _, tk := range []string{orgTok, keyTok} {
					wantRefused(t, in, i, p, tk)
				}
			}
		}
		env.Exchange(t, key).Want(t, 401)
		env.Do(t, "GET", "/v1/auth/me", person.Access, nil).Want(t, 200)
		env.Do(t, "GET", "/v1/orgs/"+person.OrgID, person.Access, nil).Want(t, 200)

		d.do(t, "PATCH", "/Users/"+id, patch(map[string]any{"op": "Replace", "path": "active", "value": "True"})).Want(t, 200)
		if role := env.Role(t, w.Org, person.UserID); role != "member" {
			t.Errorf("after reactivation: role %q; want member", role)
		}
		env.Exchange(t, key).Want(t, 401)
		// A removal refuses the tokens issued up to its second (iat has
		// whole seconds): the next second's are good.
		env.Clock.Advance(time.Second)
		fresh := orgToken(t, env, person.Access, w.Org)
		env.Do(t, "GET", "/v1/orgs/"+w.Org, fresh, nil).Want(t, 200)
	})
}

// wantRefused waits up to 2 s for path to refuse token (401 or 404).
func wantRefused(t *testing.T, env *testenv.Env, i int, path, token string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		r := env.Call(t, "GET", path, token, nil)
		if r.Status == 401 || r.Status == 404 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %d: GET %s after deprovisioning = %d %s; want refused within 2 s", i, path, r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestScimAuditByActor: the audit log filters by actor: every SCIM change,
// one SCIM token's, a person's; another workspace's token names nothing
// here, and an actor that names no one is refused.
func TestScimAuditByActor(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w, other := env.NewWorld(t), env.NewWorld(t)
		d1, id1 := newDirectory(t, env, w.Owner.Access, w.Org)
		d2, id2 := newDirectory(t, env, w.Owner.Access, w.Org)
		d3, id3 := newDirectory(t, env, other.Owner.Access, other.Org)
		d1.do(t, "POST", "/Users", userBody("one-"+testenv.RandomHex(4)+"@elsewhere.test", "a1", true)).Want(t, 201)
		d2.do(t, "POST", "/Users", userBody("two-"+testenv.RandomHex(4)+"@elsewhere.test", "a2", true)).Want(t, 201)
		d3.do(t, "POST", "/Users", userBody("three-"+testenv.RandomHex(4)+"@elsewhere.test", "a3", true)).Want(t, 201)

		actors := func(query string) map[string]int {
			seen := map[string]int{}
			for _, e := range env.Audit(t, w.Owner.Access, w.Org, query) {
				seen[e["actor_id"].(string)]++
			}
			return seen
		}
		if a := actors("actor=scim"); len(a) != 2 || a["scim:"+id1] == 0 || a["scim:"+id2] == 0 {
			t.Errorf("actor=scim: %v; want both tokens of the workspace and nothing else", a)
		}
		if a := actors("actor=scim:" + id1 + "&action=identity.scim.user_created"); len(a) != 1 || a["scim:"+id1] != 1 {
			t.Errorf("actor=scim:<token 1>: %v; want its one create", a)
		}
		if a := actors("actor=scim:" + id3); len(a) != 0 {
			t.Errorf("another workspace's token: %v; want nothing", a)
		}
		if a := actors("actor=" + w.Owner.UserID); len(a) != 1 || a[w.Owner.UserID] < 2 {
			t.Errorf("actor=<owner>: %v; want the owner's token creations only", a)
		}
		for _, bad := range []string{"SCIM", "scim:", "scim:nope", "scim%25", "someone"} {
			env.Call(t, "GET", "/v1/orgs/"+w.Org+"/audit?actor="+bad, w.Owner.Access, nil).Want(t, 400)
		}
		env.Call(t, "GET", "/v1/orgs/"+w.Org+"/audit?actor=scim", w.Member.Access, nil).Want(t, 403)
	})
}
