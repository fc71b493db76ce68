package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

const orgColumns = `id, name, slug, avatar_url, kind, owner_id, created_at, deleted_at, require_mfa`

func scanOrg(row interface{ Scan(...any) error }) (*workspace.Org, error) {
	var o workspace.Org
	var owner sql.NullString
	var created int64
	var deleted sql.NullInt64
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.AvatarURL, &o.Kind, &owner, &created, &deleted, &o.RequireMFA); err != nil {
		return nil, err
	}
	o.OwnerID, o.CreatedAt, o.DeletedAt = owner.String, fromMicros(created), fromNullMicros(deleted)
	return &o, nil
}

// LockOrg implements workspace.Store.
func (s conn) LockOrg(ctx context.Context, orgID string) error {
	var id string
	err := s.w().QueryRowContext(ctx, `SELECT id FROM orgs WHERE id = $1`+s.db.dialect.forUpdate, orgID).Scan(&id)
	return s.one(err)
}

// ShareOrg implements workspace.Store.
func (s *Workspace) ShareOrg(ctx context.Context, orgID string) error {
	var id string
	err := s.w().QueryRowContext(ctx, `SELECT id FROM orgs WHERE id = $1`+s.db.dialect.forShare, orgID).Scan(&id)
	return s.one(err)
}

// CreateOrg implements workspace.Store.
func (s *Workspace) CreateOrg(ctx context.Context, o *workspace.Org) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO orgs (`+orgColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8) ON CONFLICT DO NOTHING`,
		o.ID, o.Name, o.Slug, o.AvatarURL, o.Kind, nullString(o.OwnerID), micros(o.CreatedAt), o.RequireMFA))
}

// OrgByID implements workspace.Store; a deleted org is returned with DeletedAt set.
func (s *Workspace) OrgByID(ctx context.Context, id string) (*workspace.Org, error) {
	o, err := scanOrg(s.r().QueryRowContext(ctx, `SELECT `+orgColumns+` FROM orgs WHERE id = $1`, id))
	return o, s.one(err)
}

// OrgRole implements workspace.Store.
func (s *Workspace) OrgRole(ctx context.Context, orgID, userID string) (*workspace.Org, string, error) {
	var org nullOrg
	err := s.r().QueryRowContext(ctx, `SELECT `+s.orgRoleColumns()+`
		FROM orgs o LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = $2 WHERE o.id = $1`, orgID, userID).Scan(org.dest()...)
	if err != nil {
		return nil, "", s.one(err)
	}
	o, role := org.get()
	return o, role, nil
}

// orgRoleColumns selects org o, the role of membership m and the org's
// tool states, aggregated into one string ("+tasks,-crm": enabled,
// disabled), so that the hot paths that mint tokens read them in the same
// round trip. nullOrg scans them.
func (s *Workspace) orgRoleColumns() string {
	return `o.id, o.name, o.slug, o.avatar_url, o.kind, o.owner_id, o.created_at, o.deleted_at, o.require_mfa, m.role,
		(SELECT ` + s.db.dialect.concat + `((CASE WHEN t.enabled THEN '+' ELSE '-' END) || t.tool, ',') FROM org_tools t WHERE t.org_id = o.id)`
}

// nullOrg receives orgRoleColumns, whose org may be missing (a LEFT JOIN).
type nullOrg struct {
	id, name, slug, avatar, kind, owner, role, tools sql.NullString
	created, deleted                                 sql.NullInt64
	requireMFA                                       sql.NullBool
}

func (n *nullOrg) dest() []any {
	return []any{&n.id, &n.name, &n.slug, &n.avatar, &n.kind, &n.owner, &n.created, &n.deleted, &n.requireMFA, &n.role, &n.tools}
}

// get returns the org, nil when there was none, and the role.
func (n *nullOrg) get() (*workspace.Org, string) {
	if !n.id.Valid {
		return nil, ""
	}
	o := &workspace.Org{ID: n.id.String, Name: n.name.String, Slug: n.slug.String, AvatarURL: n.avatar.String, Kind: n.kind.String,
		OwnerID: n.owner.String, CreatedAt: fromMicros(n.created.Int64), DeletedAt: fromNullMicros(n.deleted), RequireMFA: n.requireMFA.Bool,
		ToolStates: map[string]bool{}}
	if n.tools.String != "" {
		for _, t := range strings.Split(n.tools.String, ",") {
			o.ToolStates[t[1:]] = t[0] == '+'
		}
	}
	return o, n.role.String
}

// scanFunc lets a function stand for a row in the scan helpers, so one
// query's columns can be split between several of them.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// PersonalOrg implements workspace.Store.
func (s *Workspace) PersonalOrg(ctx context.Context, userID string) (*workspace.Org, error) {
	o, err := scanOrg(s.r().QueryRowContext(ctx, `SELECT `+orgColumns+` FROM orgs WHERE owner_id = $1 AND kind = 'personal' AND deleted_at IS NULL`, userID))
	return o, s.one(err)
}

// SlugTaken implements workspace.Store.
func (s *Workspace) SlugTaken(ctx context.Context, slug string) (bool, error) {
	var n int
	err := s.r().QueryRowContext(ctx, `SELECT COUNT(*) FROM orgs WHERE slug = $1 AND deleted_at IS NULL`, slug).Scan(&n)
	return n > 0, err
}

// AddMember implements workspace.Store.
func (s *Workspace) AddMember(ctx context.Context, m *workspace.Membership) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		m.OrgID, m.UserID, m.Role, micros(m.JoinedAt)))
}

// Member implements workspace.Store.
func (s *Workspace) Member(ctx context.Context, orgID, userID string) (*workspace.Membership, error) {
	m := workspace.Membership{OrgID: orgID, UserID: userID}
	var joined int64
	err := s.r().QueryRowContext(ctx, `SELECT role, joined_at FROM memberships WHERE org_id = $1 AND user_id = $2`, orgID, userID).Scan(&m.Role, &joined)
	if err != nil {
		return nil, s.one(err)
	}
	m.JoinedAt = fromMicros(joined)
	return &m, nil
}

// ToolStates implements workspace.Store.
func (s *Workspace) ToolStates(ctx context.Context, orgID string) (map[string]bool, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT tool, enabled FROM org_tools WHERE org_id = $1`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	states := map[string]bool{}
	for rows.Next() {
		var tool string
		var on bool
		if err := rows.Scan(&tool, &on); err != nil {
			return nil, err
		}
		states[tool] = on
	}
	return states, rows.Err()
}

// UpdateOrg implements workspace.Store.
func (s *Workspace) UpdateOrg(ctx context.Context, o *workspace.Org) error {
	res, err := s.w().ExecContext(ctx, `UPDATE orgs SET name = $2, slug = $3, avatar_url = $4, require_mfa = $5 WHERE id = $1 AND deleted_at IS NULL`,
		o.ID, o.Name, o.Slug, o.AvatarURL, o.RequireMFA)
	return affected(res, s.db.dialect.translate(err))
}

// RecordPolicy implements workspace.Store: a revocation of kind
// revocation.KindPolicy, which every instance's list reads within a poll.
func (s *Workspace) RecordPolicy(ctx context.Context, orgID string, at time.Time) error {
	return s.revoke(ctx, revocation.KindPolicy, at, `SELECT $2 || id AS subject, id AS org_id FROM orgs WHERE id = $1`,
		[]any{orgID, revocation.PolicyPrefix}, func(conn) error { return nil })
}

// ClearDefaultOrg implements workspace.Store.
func (s *Workspace) ClearDefaultOrg(ctx context.Context, orgID, userID string) error {
	var err error
	if userID == "" {
		_, err = s.w().ExecContext(ctx, `UPDATE users SET default_org_id = NULL WHERE default_org_id = $1`, orgID)
	} else {
		_, err = s.w().ExecContext(ctx, `UPDATE users SET default_org_id = NULL WHERE id = $2 AND default_org_id = $1`, orgID, userID)
	}
	return err
}

// CountTeams implements workspace.Store.
func (s *Workspace) CountTeams(ctx context.Context, orgID string) (int, error) {
	var n int
	err := s.r().QueryRowContext(ctx, `SELECT COUNT(*) FROM teams WHERE org_id = $1 AND deleted_at IS NULL`, orgID).Scan(&n)
	return n, err
}

// OrgMembers implements workspace.Store: one query, served by the
// memberships_org_joined index.
func (s *Workspace) OrgMembers(ctx context.Context, orgID string) ([]workspace.PersonRow, error) {
	return s.people(ctx, `SELECT m.user_id, u.name, u.email, u.avatar_url, m.role, m.joined_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1 ORDER BY m.joined_at, m.user_id`, orgID)
}

// MemberPage implements workspace.Store: one statement, no count. Without
// a search the page is cut from the memberships_org_list index alone
// (org_id, joined_at, user_id) before the users are joined: from f.After's
// position (keyset) when set, else after f.Offset rows. With one, the name
// is filtered with the dialect's case-insensitive LIKE (SQLite's LIKE,
// PostgreSQL's ILIKE) and the address, stored lowercased, with LIKE (the
// pattern lowered, its own %, _ and \ escaped), and the scan stops at the
// page's last row: no COUNT(*) OVER (), which read every match. No LOWER()
// per row: it doubled the scan's cost.
func (s *Workspace) MemberPage(ctx context.Context, orgID string, f workspace.MemberFilter) ([]workspace.PersonRow, error) {
	args, after := []any{orgID}, func(string) string { return "" }
	if f.After != nil {
		args = append(args, micros(f.After.JoinedAt), f.After.UserID)
		after = func(m string) string { return ` AND (` + m + `joined_at, ` + m + `user_id) > ($2, $3)` }
	}
	page := fmt.Sprintf(` LIMIT %d`, f.Limit)
	if f.After == nil {
		page += fmt.Sprintf(` OFFSET %d`, f.Offset)
	}
	if f.Query == "" {
		return s.people(ctx, `SELECT m.user_id, u.name, u.email, u.avatar_url, m.role, m.joined_at
			FROM (SELECT user_id, role, joined_at FROM memberships WHERE org_id = $1`+after("")+` ORDER BY joined_at, user_id`+page+`) m
			JOIN users u ON u.id = m.user_id ORDER BY m.joined_at, m.user_id`, args...)
	}
	n := len(args) + 1
	return s.people(ctx, `SELECT m.user_id, u.name, u.email, u.avatar_url, m.role, m.joined_at
		FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1`+after("m.")+fmt.Sprintf(` AND (u.name %s $%d ESCAPE '\' OR u.email LIKE $%d ESCAPE '\')`, s.db.dialect.ilike, n, n)+`
		ORDER BY m.joined_at, m.user_id`+page, append(args, likePattern(f.Query))...)
}

// CountMembers implements workspace.Store: the whole directory from the
// memberships_org_list index, or every match of the search.
func (s *Workspace) CountMembers(ctx context.Context, orgID, query string) (int, error) {
	var n int
	var err error
	if query == "" {
		err = s.r().QueryRowContext(ctx, `SELECT COUNT(*) FROM memberships WHERE org_id = $1`, orgID).Scan(&n)
	} else {
		err = s.r().QueryRowContext(ctx, `SELECT COUNT(*) FROM memberships m JOIN users u ON u.id = m.user_id
			WHERE m.org_id = $1 AND (u.name `+s.db.dialect.ilike+` $2 ESCAPE '\' OR u.email LIKE $2 ESCAPE '\')`, orgID, likePattern(query)).Scan(&n)
	}
	return n, err
}

// likePattern is a LIKE pattern matching any text that contains q lowered.
func likePattern(q string) string {
	return "%" + likeEscaper.Replace(strings.ToLower(q)) + "%"
}

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// MemberByEmail implements workspace.Store.
func (s *Workspace) MemberByEmail(ctx context.Context, orgID, email string) (*workspace.PersonRow, error) {
	rows, err := s.people(ctx, `SELECT m.user_id, u.name, u.email, u.avatar_url, m.role, m.joined_at
		FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND u.email = $2`, orgID, email)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, gatehouse.ErrNotFound
	}
	return &rows[0], nil
}

// SetMemberRole implements workspace.Store.
func (s *Workspace) SetMemberRole(ctx context.Context, orgID, userID, role string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE memberships SET role = $3 WHERE org_id = $1 AND user_id = $2`, orgID, userID, role))
}

// RemoveMember implements workspace.Store.
func (s *Workspace) RemoveMember(ctx context.Context, orgID, userID string, at time.Time) error {
	return s.revoke(ctx, revocation.KindMember, at, `SELECT user_id AS subject, org_id FROM memberships WHERE org_id = $1 AND user_id = $2`,
		[]any{orgID, userID}, func(c conn) error {
			return affected(c.w().ExecContext(ctx, `DELETE FROM memberships WHERE org_id = $1 AND user_id = $2`, orgID, userID))
		})
}

// RemoveTeamMemberships implements workspace.Store.
func (s *Workspace) RemoveTeamMemberships(ctx context.Context, orgID, userID string) error {
	_, err := s.w().ExecContext(ctx, `DELETE FROM team_members WHERE user_id = $2 AND team_id IN (SELECT id FROM teams WHERE org_id = $1)`, orgID, userID)
	return err
}
