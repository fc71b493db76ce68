package testenv

import (
	"net/url"
	"testing"

	"github.com/google/uuid"
)

// Exec runs one raw SQL statement on the env's database.
func (e *Env) Exec(t testing.TB, query string, args ...any) {
	t.Helper()
	if _, err := e.Store.DB().Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TeamOrg creates a team org named name straight in the database with the
// given members in order, each a user id and a role, and returns its id.
func (e *Env) TeamOrg(t testing.TB, name string, members ...[2]string) string {
	t.Helper()
	id := uuid.NewString()
	now := e.Clock.Now().UnixMicro()
	e.Exec(t, `INSERT INTO orgs (id, name, slug, avatar_url, kind, created_at) VALUES ($1, $2, $3, '', 'team', $4)`,
		id, name, "team-"+RandomHex(6), now)
	for i, m := range members {
		e.Exec(t, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)`,
			id, m[0], m[1], now+int64(i))
	}
	return id
}

// OrgDeleted reports whether org id is soft-deleted (or gone).
func (e *Env) OrgDeleted(t testing.TB, id string) bool {
	t.Helper()
	var n int
	if err := e.Store.DB().QueryRow(`SELECT COUNT(*) FROM orgs WHERE id = $1 AND deleted_at IS NULL`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 0
}

// Owners counts org's owners, read from the database.
func (e *Env) Owners(t testing.TB, org string) int {
	t.Helper()
	var n int
	if err := e.Store.DB().QueryRow(`SELECT COUNT(*) FROM memberships WHERE org_id = $1 AND role = 'owner'`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Role returns userID's role in org read from the database, "" when they
// are not a member.
func (e *Env) Role(t testing.TB, org, userID string) string {
	t.Helper()
	var roles []string
	rows, err := e.Store.DB().Query(`SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2`, org, userID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(roles) > 1 {
		t.Fatalf("user %s has %d memberships of org %s; want at most 1", userID, len(roles), org)
	}
	if len(roles) == 0 {
		return ""
	}
	return roles[0]
}

// MemberRoles returns org's members' roles by user id, as token reads
// them through the API.
func (e *Env) MemberRoles(t testing.TB, token, org string) map[string]string {
	t.Helper()
	r := e.Do(t, "GET", "/v1/orgs/"+org+"/members", token, nil).Want(t, 200)
	roles := map[string]string{}
	for _, m := range r.Get("members").([]any) {
		row := m.(map[string]any)
		roles[row["user_id"].(string)] = row["role"].(string)
	}
	return roles
}

// CreateOrg creates a team org as u through the API and returns its id;
// u.Token becomes the token scoped to it.
func (e *Env) CreateOrg(t testing.TB, u *Account, name string) string {
	t.Helper()
	r := e.Do(t, "POST", "/v1/orgs", u.Token, map[string]string{"name": name}).Want(t, 200)
	u.Token = r.Str("access_token")
	return r.Str("org.id")
}

// Team registers an owner and creates a team org; the owner's Token is
// scoped to it.
func (e *Env) Team(t testing.TB) (owner *Account, org string) {
	t.Helper()
	owner = e.Register(t)
	return owner, e.CreateOrg(t, owner, "Team "+RandomHex(3))
}

// InviteToken returns the token of an invitation url.
func InviteToken(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("invitation url %q has no token", raw)
	}
	return u.Query().Get("token")
}

// Invite creates an email invitation to org for email with role, as
// token, and returns its token.
func (e *Env) Invite(t testing.TB, token, org, email, role string) string {
	t.Helper()
	r := e.Do(t, "POST", "/v1/orgs/"+org+"/invitations", token, map[string]any{"emails": []string{email}, "role": role}).Want(t, 200)
	invs, _ := r.Get("invitations").([]any)
	if len(invs) != 1 {
		t.Fatalf("invitations = %s; want one", r.Body)
	}
	return InviteToken(t, invs[0].(map[string]any)["url"].(string))
}

// InviteByLink creates a link invitation to org as token and returns its
// token.
func (e *Env) InviteByLink(t testing.TB, token, org string) string {
	t.Helper()
	r := e.Do(t, "POST", "/v1/orgs/"+org+"/invitations", token, map[string]any{"kind": "link"}).Want(t, 200)
	return InviteToken(t, r.Str("invitation.url"))
}

// Join registers a user and makes them a member of org with role, through
// an invitation from owner (and a role change for owner and billing); the
// user's Token is then the one the accept minted, scoped to org.
func (e *Env) Join(t testing.TB, owner *Account, org, role string) *Account {
	t.Helper()
	u := e.Register(t)
	invRole := role
	if role != "admin" {
		invRole = "member"
	}
	tok := e.Invite(t, owner.Token, org, u.Email, invRole)
	u.Token = e.Do(t, "POST", "/v1/invitations/"+tok+"/accept", u.Token, nil).Want(t, 200).Str("access_token")
	if invRole != role {
		e.Do(t, "PATCH", "/v1/orgs/"+org+"/members/"+u.UserID, owner.Token, map[string]string{"role": role}).Want(t, 200)
	}
	return u
}

// World is a team org with one user of each role, and a stranger. Their
// tokens are those of registration, scoped to their personal orgs.
type World struct {
	Owner, Admin, Billing, Member, Stranger *Account
	Org                                     string // the team org
}

// NewWorld registers five users and puts four of them in a new team org,
// straight in the database.
func (e *Env) NewWorld(t testing.TB) *World {
	t.Helper()
	w := &World{Owner: e.Register(t), Admin: e.Register(t), Billing: e.Register(t), Member: e.Register(t), Stranger: e.Register(t)}
	w.Org = e.TeamOrg(t, "Acme "+RandomHex(3),
		[2]string{w.Owner.UserID, "owner"}, [2]string{w.Admin.UserID, "admin"},
		[2]string{w.Billing.UserID, "billing"}, [2]string{w.Member.UserID, "member"})
	return w
}
