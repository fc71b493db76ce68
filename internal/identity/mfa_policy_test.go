package identity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// strictTeam is a team org whose owner signed in with two factors, with
// an admin and a member who have none (aal1), before it requires
// two-factor.
type strictTeam struct {
	Org           string
	Owner         string // the owner's aal2 token, scoped to the team
	Admin, Member *testenv.Account
}

func newStrictTeam(t *testing.T, env *testenv.Env) *strictTeam {
	t.Helper()
	m := withTOTP(t, env)
	owner := &testenv.Account{Token: m.Access}
	org := env.CreateOrg(t, owner, "Strict team")
	return &strictTeam{Org: org, Owner: owner.Token, Admin: env.Join(t, owner, org, "admin"), Member: env.Join(t, owner, org, "member")}
}

// requireMFA switches the team's requirement on as its aal2 owner, on env.
func (s *strictTeam) requireMFA(t *testing.T, env *testenv.Env, on bool) {
	t.Helper()
	env.Call(t, "PATCH", "/v1/orgs/"+s.Org, s.Owner, map[string]any{"require_mfa": on}).Want(t, 200)
}

// wantPolicy waits up to within for path to refuse token 403 naming the
// workspace's two-factor requirement on env.
func wantPolicy(t *testing.T, env *testenv.Env, name, method, path, token string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := env.Call(t, method, path, token, map[string]any{})
		if r.Status == 403 && strings.Contains(r.Str("error"), "requires two-factor") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s %s = %d %s; want 403 naming the two-factor requirement within %s", name, method, path, r.Status, r.Body, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRequireMFAKeys: keys hold the workspace's requirement (issue 23
// item 3). A personal key and an org key made by a password-only (aal1)
// admin before the requirement was switched on record aal1: after it,
// exchanging them is refused, and the tokens they gave before are refused
// at the tool APIs and org routes, including changing the settings back,
// on this instance and another. The aal1 admin can make neither kind of
// key for the workspace any more; the aal2 owner can, and their tokens
// (aal2) work. Without the requirement an aal1 key works as before.
func TestRequireMFAKeys(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		other := env.Another(t)
		s := newStrictTeam(t, env)
		personal := env.CreateUserKey(t, s.Admin.Access, map[string]any{"name": "ci", "org_id": s.Org}).Str("api_key.secret")
		service := env.CreateOrgKey(t, s.Admin.Token, s.Org, map[string]any{"name": "svc", "role": "admin"}).Str("api_key.secret")
		var tokens []string
		for _, secret := range []string{personal, service} {
			kt := env.Exchange(t, secret).Want(t, 200).Str("access_token")
			if c := testenv.Claims(t, kt); c["aal"] != "aal1" {
				t.Fatalf("token of a key made at aal1: aal %v; want aal1", c["aal"])
			}
			for _, in := range []*testenv.Env{env, other} {
				in.Call(t, "GET", "/tasks/v1/issues", kt, nil).Want(t, 200) // standing cached
			}
			tokens = append(tokens, kt)
		}
		s.requireMFA(t, env, true)

		policy := testenv.ErrorNames("requires two-factor")
		env.RunCases(t, []testenv.Case{
			{Name: "exchange the aal1 personal key", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": personal}, Want: 403, Check: policy},
			{Name: "exchange the aal1 org key", Method: "POST", Path: "/v1/auth/token", Body: map[string]string{"api_key": service}, Want: 403, Check: policy},
			{Name: "aal1 personal key for the team", Method: "POST", Path: "/v1/me/api-keys", Token: s.Admin.Access,
				Body: map[string]any{"name": "ci 2", "org_id": s.Org}, Want: 403, Check: policy},
			{Name: "aal1 org key", Method: "POST", Path: "/v1/orgs/" + s.Org + "/api-keys", Token: s.Admin.Token,
				Body: map[string]any{"name": "svc 2"}, Want: 403, Check: policy},
			{Name: "aal1 session turns it off", Method: "PATCH", Path: "/v1/orgs/" + s.Org, Token: s.Admin.Token,
				Body: map[string]any{"require_mfa": false}, Want: 403, Check: policy},
			{Name: "aal1 personal key elsewhere", Method: "POST", Path: "/v1/me/api-keys", Token: s.Admin.Access,
				Body: map[string]any{"name": "mine"}, Want: 200},
		})
		for i, kt := range tokens {
			for _, in := range []*testenv.Env{env, other} {
				wantPolicy(t, in, "key token", "GET", "/tasks/v1/issues", kt, time.Second)
				wantPolicy(t, in, "key token", "GET", "/v1/orgs/"+s.Org, kt, 0)
			}
			if i == 1 { // the admin org key
				wantPolicy(t, env, "org key token", "PATCH", "/v1/orgs/"+s.Org, kt, 0)
			}
		}
		// The aal2 owner's keys carry aal2 and work.
		owned := env.CreateUserKey(t, s.Owner, map[string]any{"name": "ci", "org_id": s.Org}).Str("api_key.secret")
		svc := env.CreateOrgKey(t, s.Owner, s.Org, map[string]any{"name": "svc"}).Str("api_key.secret")
		for _, secret := range []string{owned, svc} {
			kt := env.Exchange(t, secret).Want(t, 200).Str("access_token")
			if c := testenv.Claims(t, kt); c["aal"] != "aal2" {
				t.Errorf("token of a key made at aal2: aal %v; want aal2", c["aal"])
			}
			other.Call(t, "GET", "/tasks/v1/issues", kt, nil).Want(t, 200)
		}
		// A workspace without the requirement: an aal1 key works.
		env.Call(t, "GET", "/tasks/v1/issues", env.KeyToken(t, s.Member), nil).Want(t, 200)
	})
}

// TestRequireMFANoCacheWindow: once a workspace requires two-factor, a
// password-only (aal1) token is refused at the tool APIs at once on the
// instance that switched it on and within the revocation poll on another,
// though both had its standing cached a moment before (the test clock
// stands still, so without a fresh read the cache would answer for ever).
// aal2 tokens keep working; switched off again, aal1 ones work again.
func TestRequireMFANoCacheWindow(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		other := env.Another(t)
		s := newStrictTeam(t, env)
		paths := []string{"/tasks/v1/issues", "/links/v1/links"}
		for _, in := range []*testenv.Env{env, other} {
			for _, path := range paths {
				in.Call(t, "GET", path, s.Member.Token, nil).Want(t, 200)
				in.Call(t, "GET", path, s.Owner, nil).Want(t, 200)
			}
		}
		s.requireMFA(t, env, true)
		for _, path := range paths {
			wantPolicy(t, env, "this instance", "GET", path, s.Member.Token, 0)
			wantPolicy(t, other, "the other instance", "GET", path, s.Member.Token, time.Second)
			for _, in := range []*testenv.Env{env, other} {
				in.Call(t, "GET", path, s.Owner, nil).Want(t, 200)
			}
		}
		s.requireMFA(t, env, false)
		env.Call(t, "GET", paths[0], s.Member.Token, nil).Want(t, 200)
	})
}
