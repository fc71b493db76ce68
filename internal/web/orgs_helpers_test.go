package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// orgsCase is one row of a scenario table.
type orgsCase struct {
	name       string
	method     string
	path       string
	body       any
	token      string
	wantStatus int
}

// runOrgsCases runs each row as a subtest and checks its status; an error
// answer must carry a non-empty error field.
func runOrgsCases(t *testing.T, env *testenv.Env, cases []orgsCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := env.Do(t, c.method, c.path, c.token, c.body)
			if r.Status != c.wantStatus {
				t.Fatalf("%s %s: status = %d, body %s; want %d", c.method, c.path, r.Status, r.Body, c.wantStatus)
			}
			if r.Status >= 400 && r.Str("error") == "" {
				t.Errorf("%s %s: error body = %s; want {error: message}", c.method, c.path, r.Body)
			}
		})
	}
}

// orgsUser is an account with an access token.
type orgsUser struct {
	*testenv.Account
	Token string
}

func orgsRegister(t *testing.T, env *testenv.Env) *orgsUser {
	t.Helper()
	a := env.Register(t)
	return &orgsUser{Account: a, Token: a.Access}
}

// orgsCreate creates a team org as u and returns its id; u.Token becomes the
// token scoped to it.
func orgsCreate(t *testing.T, env *testenv.Env, u *orgsUser, name string) string {
	t.Helper()
	r := env.Do(t, "POST", "/v1/orgs", u.Token, map[string]string{"name": name}).Want(t, 200)
	u.Token = r.Str("access_token")
	return r.Str("org.id")
}

// orgsTeam registers an owner and creates a team org.
func orgsTeam(t *testing.T, env *testenv.Env) (*orgsUser, string) {
	t.Helper()
	owner := orgsRegister(t, env)
	return owner, orgsCreate(t, env, owner, "Team "+testenv.RandomHex(3))
}

// orgsInviteToken returns the token of an invitation url.
func orgsInviteToken(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("invitation url %q has no token", raw)
	}
	return u.Query().Get("token")
}

// orgsInvite creates an email invitation for email with role and returns
// its token.
func orgsInvite(t *testing.T, env *testenv.Env, tok, orgID, email, role string) string {
	t.Helper()
	r := env.Do(t, "POST", "/v1/orgs/"+orgID+"/invitations", tok, map[string]any{"emails": []string{email}, "role": role}).Want(t, 200)
	invs, _ := r.Get("invitations").([]any)
	if len(invs) != 1 {
		t.Fatalf("invitations = %s; want one", r.Body)
	}
	return orgsInviteToken(t, invs[0].(map[string]any)["url"].(string))
}

// orgsLink creates a link invitation and returns its token.
func orgsLink(t *testing.T, env *testenv.Env, tok, orgID string) string {
	t.Helper()
	r := env.Do(t, "POST", "/v1/orgs/"+orgID+"/invitations", tok, map[string]any{"kind": "link"}).Want(t, 200)
	return orgsInviteToken(t, r.Str("invitation.url"))
}

// orgsJoin registers a user and makes them a member of orgID with role,
// through an invitation (and a role change for owner and billing); the
// user's Token is then the one the accept minted, scoped to orgID.
func orgsJoin(t *testing.T, env *testenv.Env, owner *orgsUser, orgID, role string) *orgsUser {
	t.Helper()
	u := orgsRegister(t, env)
	invRole := role
	if role != "admin" {
		invRole = "member"
	}
	tok := orgsInvite(t, env, owner.Token, orgID, u.Email, invRole)
	u.Token = env.Do(t, "POST", "/v1/invitations/"+tok+"/accept", u.Token, nil).Want(t, 200).Str("access_token")
	if invRole != role {
		env.Do(t, "PATCH", "/v1/orgs/"+orgID+"/members/"+u.UserID, owner.Token, map[string]string{"role": role}).Want(t, 200)
	}
	return u
}

// orgsRoles returns the org's members' roles by user id.
func orgsRoles(t *testing.T, env *testenv.Env, tok, orgID string) map[string]string {
	t.Helper()
	r := env.Do(t, "GET", "/v1/orgs/"+orgID+"/members", tok, nil).Want(t, 200)
	roles := map[string]string{}
	for _, m := range r.Get("members").([]any) {
		row := m.(map[string]any)
		roles[row["user_id"].(string)] = row["role"].(string)
	}
	return roles
}

// orgsOwners counts owners straight from the database.
func orgsOwners(t *testing.T, env *testenv.Env, orgID string) int {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM memberships WHERE org_id = $1 AND role = 'owner'`, orgID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// orgsClaims decodes an access token's claims without verifying it.
func orgsClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q is not a JWT", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// orgsKeyToken forges an access token as a key exchange would mint it
// (via api_key, no session) for the user of the real token like, scoped to
// orgID with role. Issuer and subject are copied from like.
func orgsKeyToken(t *testing.T, env *testenv.Env, like, orgID, role string) string {
	t.Helper()
	return orgsForge(t, env, like, token.Claims{Via: "api_key", Org: token.OrgClaim{ID: orgID, Role: role}})
}

// orgsForge signs claims c with the test key for the subject and issuer of
// the real token like, valid for an hour.
func orgsForge(t *testing.T, env *testenv.Env, like string, c token.Claims) string {
	t.Helper()
	real := orgsClaims(t, like)
	iss, _ := real["iss"].(string)
	sub, _ := real["sub"].(string)
	s, err := token.NewSigner([]byte("test-secret-test-secret-test-secret!"), iss, env.Clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := s.Issue(c, sub, env.Clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// orgsAudit returns the org's identity entries with action, newest first.
func orgsAudit(t *testing.T, env *testenv.Env, orgID, action string) []map[string]string {
	t.Helper()
	es, err := env.Store.AuditLog(context.Background(), orgID, "identity", action, 500)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]string, len(es))
	for i, e := range es {
		out[i] = map[string]string{"actor_id": e.ActorID, "target_type": e.TargetType, "target_id": e.TargetID, "meta": e.Meta, "action": e.Action}
	}
	return out
}

// orgsAtOnce runs n calls of fn at the same moment and returns their statuses
// and bodies, in call order.
func orgsAtOnce(n int, fn func(i int) *testenv.Resp) []*testenv.Resp {
	out := make([]*testenv.Resp, n)
	testenv.AtOnce(n, func(i int) { out[i] = fn(i) })
	return out
}
