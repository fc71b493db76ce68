package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// CreateTeam implements workspace.Store.
func (s *Workspace) CreateTeam(ctx context.Context, t *workspace.Team) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO teams (id, org_id, name, description, created_at, managed) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.OrgID, t.Name, t.Description, micros(t.CreatedAt), t.Managed)
	return s.db.dialect.translate(err)
}

// TeamByID implements workspace.Store.
func (s *Workspace) TeamByID(ctx context.Context, orgID, teamID string) (*workspace.Team, error) {
	t := workspace.Team{ID: teamID, OrgID: orgID}
	var created int64
	err := s.r().QueryRowContext(ctx, `SELECT name, description, created_at, managed FROM teams WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL`,
		teamID, orgID).Scan(&t.Name, &t.Description, &created, &t.Managed)
	if err != nil {
		return nil, s.one(err)
	}
	t.CreatedAt = fromMicros(created)
	return &t, nil
}

// ListTeams implements workspace.Store.
func (s *Workspace) ListTeams(ctx context.Context, orgID, userID string) ([]workspace.Team, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT t.id, t.name, t.description, t.created_at,
			(SELECT COUNT(*) FROM team_members c WHERE c.team_id = t.id),
			COALESCE((SELECT m.role FROM team_members m WHERE m.team_id = t.id AND m.user_id = $2), '')
		FROM teams t WHERE t.org_id = $1 AND t.deleted_at IS NULL ORDER BY t.created_at, t.id`, orgID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []workspace.Team
	for rows.Next() {
		t := workspace.Team{OrgID: orgID}
		var created int64
		if err := rows.Scan(&t.ID, &t.Name, &t.Description, &created, &t.MemberCount, &t.MyRole); err != nil {
			return nil, err
		}
		t.CreatedAt = fromMicros(created)
		out = append(out, t)
	}
	return out, rows.Err()
}

// UpdateTeam implements workspace.Store.
func (s *Workspace) UpdateTeam(ctx context.Context, t *workspace.Team) error {
	return affected(s.w().ExecContext(ctx, `UPDATE teams SET name = $2, description = $3 WHERE id = $1 AND deleted_at IS NULL`, t.ID, t.Name, t.Description))
}

// SoftDeleteTeam implements workspace.Store.
func (s *Workspace) SoftDeleteTeam(ctx context.Context, teamID string, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE teams SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, teamID, micros(at)))
}

// TeamMembers implements workspace.Store.
func (s *Workspace) TeamMembers(ctx context.Context, teamID string) ([]workspace.PersonRow, error) {
	return s.people(ctx, `SELECT u.id, u.name, u.email, u.avatar_url, m.role, m.joined_at
		FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.team_id = $1 ORDER BY m.joined_at, u.id`, teamID)
}

func (s *Workspace) people(ctx context.Context, query string, args ...any) ([]workspace.PersonRow, error) {
	rows, err := s.r().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []workspace.PersonRow{}
	for rows.Next() {
		var p workspace.PersonRow
		var joined int64
		if err := rows.Scan(&p.UserID, &p.Name, &p.Email, &p.AvatarURL, &p.Role, &joined); err != nil {
			return nil, err
		}
		p.JoinedAt = fromMicros(joined)
		out = append(out, p)
	}
	return out, rows.Err()
}

// TeamRole implements workspace.Store.
func (s *Workspace) TeamRole(ctx context.Context, teamID, userID string) (string, error) {
	var role string
	err := s.r().QueryRowContext(ctx, `SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2`, teamID, userID).Scan(&role)
	return role, s.one(err)
}

// UpsertTeamMember implements workspace.Store.
func (s *Workspace) UpsertTeamMember(ctx context.Context, teamID, userID, role string, at time.Time) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO team_members (team_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role`, teamID, userID, role, micros(at))
	return s.db.dialect.translate(err)
}

// RemoveTeamMember implements workspace.Store.
func (s *Workspace) RemoveTeamMember(ctx context.Context, teamID, userID string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM team_members WHERE team_id = $1 AND user_id = $2`, teamID, userID))
}

// SetTool implements workspace.Store.
func (s *Workspace) SetTool(ctx context.Context, orgID, tool string, enabled bool) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO org_tools (org_id, tool, enabled) VALUES ($1, $2, $3)
		ON CONFLICT (org_id, tool) DO UPDATE SET enabled = excluded.enabled`, orgID, tool, enabled)
	return s.db.dialect.translate(err)
}

const domainColumns = `id, org_id, domain, mode, token, verified_at, created_at`

func scanDomain(row interface{ Scan(...any) error }) (*workspace.DomainClaim, error) {
	var d workspace.DomainClaim
	var verified sql.NullInt64
	var created int64
	if err := row.Scan(&d.ID, &d.OrgID, &d.Domain, &d.Mode, &d.Token, &verified, &created); err != nil {
		return nil, err
	}
	d.VerifiedAt, d.CreatedAt = fromNullMicros(verified), fromMicros(created)
	return &d, nil
}

// CreateDomain implements workspace.Store.
func (s *Workspace) CreateDomain(ctx context.Context, d *workspace.DomainClaim) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO domains (`+domainColumns+`) VALUES ($1, $2, $3, $4, $5, NULL, $6) ON CONFLICT DO NOTHING`,
		d.ID, d.OrgID, d.Domain, d.Mode, d.Token, micros(d.CreatedAt)))
}

// ListDomains implements workspace.Store.
func (s *Workspace) ListDomains(ctx context.Context, orgID string) ([]workspace.DomainClaim, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+domainColumns+` FROM domains WHERE org_id = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []workspace.DomainClaim{}
	for rows.Next() {
		d, err := scanDomain(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

// DomainByID implements workspace.Store.
func (s *Workspace) DomainByID(ctx context.Context, orgID, id string) (*workspace.DomainClaim, error) {
	d, err := scanDomain(s.r().QueryRowContext(ctx, `SELECT `+domainColumns+` FROM domains WHERE id = $1 AND org_id = $2`, id, orgID))
	return d, s.one(err)
}

// SetDomainMode implements workspace.Store.
func (s *Workspace) SetDomainMode(ctx context.Context, id, mode string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE domains SET mode = $2 WHERE id = $1`, id, mode))
}

// DeleteDomain implements workspace.Store.
func (s *Workspace) DeleteDomain(ctx context.Context, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM domains WHERE id = $1`, id))
}

// MarkDomainVerified implements workspace.Store. The partial unique index on
// verified domains turns a lost race into ErrConflict.
func (s *Workspace) MarkDomainVerified(ctx context.Context, id string, at time.Time) error {
	_, err := s.w().ExecContext(ctx, `UPDATE domains SET verified_at = $2 WHERE id = $1 AND verified_at IS NULL`, id, micros(at))
	return s.db.dialect.translate(err)
}

// DomainVerifiedBy implements workspace.Store.
func (s *Workspace) DomainVerifiedBy(ctx context.Context, domain string) (string, error) {
	var org string
	err := s.r().QueryRowContext(ctx, `SELECT org_id FROM domains WHERE domain = $1 AND verified_at IS NOT NULL`, domain).Scan(&org)
	return org, s.one(err)
}

// DomainOffers implements workspace.Store.
func (s *Workspace) DomainOffers(ctx context.Context, domain string) ([]workspace.DomainOffer, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT o.id, o.name, o.slug, o.avatar_url, o.kind, o.owner_id, o.created_at, o.deleted_at, d.domain, d.mode
		FROM domains d JOIN orgs o ON o.id = d.org_id
		WHERE d.domain = $1 AND d.verified_at IS NOT NULL AND o.deleted_at IS NULL ORDER BY d.verified_at, d.id`, domain)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []workspace.DomainOffer
	for rows.Next() {
		var off workspace.DomainOffer
		var owner sql.NullString
		var created int64
		var deleted sql.NullInt64
		if err := rows.Scan(&off.Org.ID, &off.Org.Name, &off.Org.Slug, &off.Org.AvatarURL, &off.Org.Kind, &owner, &created, &deleted, &off.Domain, &off.Mode); err != nil {
			return nil, err
		}
		off.Org.OwnerID, off.Org.CreatedAt = owner.String, fromMicros(created)
		out = append(out, off)
	}
	return out, rows.Err()
}

// AuditLog implements workspace.Store.
func (s *Workspace) AuditLog(ctx context.Context, orgID, tool, action string, limit int) ([]gatehouse.AuditEntry, error) {
	return s.AuditLogWhere(ctx, orgID, workspace.AuditFilter{Tool: tool, Action: action}, limit)
}

// PersonActivity implements identity.Store.
func (s *Identity) PersonActivity(ctx context.Context, userID string, actions []string, at time.Time, id string, limit int) ([]gatehouse.AuditEntry, error) {
	args := []any{userID}
	for _, a := range actions {
		args = append(args, a)
	}
	q := `SELECT id, org_id, tool, action, actor_id, target_type, target_id, meta, at FROM audit_log
		WHERE (actor_id = $1 OR target_id = $1) AND action IN (` + placeholders(2, len(actions)) + `)`
	if !at.IsZero() {
		args = append(args, micros(at), id)
		q += fmt.Sprintf(` AND (at < $%d OR (at = $%d AND id < $%d))`, len(args)-1, len(args)-1, len(args))
	}
	args = append(args, limit)
	q += ` ORDER BY at DESC, id DESC LIMIT ` + placeholders(len(args), 1)
	return s.auditRows(ctx, q, args...)
}

// auditRows reads the audit entries query q selects.
func (s *Workspace) auditRows(ctx context.Context, q string, args ...any) ([]gatehouse.AuditEntry, error) {
	rows, err := s.r().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []gatehouse.AuditEntry{}
	for rows.Next() {
		var e gatehouse.AuditEntry
		var at int64
		if err := rows.Scan(&e.ID, &e.OrgID, &e.Tool, &e.Action, &e.ActorID, &e.TargetType, &e.TargetID, &e.Meta, &at); err != nil {
			return nil, err
		}
		e.At = fromMicros(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// AuditLogWhere implements workspace.Store.
func (s *Workspace) AuditLogWhere(ctx context.Context, orgID string, f workspace.AuditFilter, limit int) ([]gatehouse.AuditEntry, error) {
	q := `SELECT id, org_id, tool, action, actor_id, target_type, target_id, meta, at FROM audit_log WHERE org_id = $1`
	args := []any{orgID}
	if f.Tool != "" {
		args = append(args, f.Tool)
		q += ` AND tool = $2`
	}
	if f.Action != "" {
		args = append(args, f.Action)
		q += ` AND action = ` + placeholders(len(args), 1)
	}
	if !f.From.IsZero() {
		args = append(args, micros(f.From))
		q += ` AND at >= ` + placeholders(len(args), 1)
	}
	if !f.To.IsZero() {
		args = append(args, micros(f.To))
		q += ` AND at < ` + placeholders(len(args), 1)
	}
	switch f.Actor {
	case "":
	case workspace.ActorSCIM:
		// substr, not LIKE: SQLite's LIKE ignores case.
		q += ` AND substr(actor_id, 1, 5) = 'scim:'`
	default:
		args = append(args, f.Actor)
		q += ` AND actor_id = ` + placeholders(len(args), 1)
	}
	args = append(args, limit)
	q += ` ORDER BY at DESC, id DESC LIMIT ` + placeholders(len(args), 1)
	return s.auditRows(ctx, q, args...)
}

// auditNameQueries are the reads of AuditNames by kind: the kind, id and
// name of each id asked for that still exists ($1 is the workspace, which
// the user read names only so that PostgreSQL knows its type).
var auditNameQueries = map[string]string{
	"user":           `SELECT 'user', id, CASE WHEN name = '' THEN email ELSE name END FROM users WHERE CAST($1 AS TEXT) <> '' AND id IN (%s)`,
	"team":           `SELECT 'team', id, name FROM teams WHERE org_id = $1 AND deleted_at IS NULL AND id IN (%s)`,
	"api_key":        `SELECT 'api_key', id, name FROM api_keys WHERE org_id = $1 AND id IN (%s)`,
	"scim_token":     `SELECT 'scim_token', id, name FROM scim_tokens WHERE org_id = $1 AND id IN (%s)`,
	"application":    `SELECT 'application', id, client_name FROM applications WHERE org_id = $1 AND deleted_at IS NULL AND id IN (%s)`,
	"sso_connection": `SELECT 'sso_connection', id, name FROM sso_connections WHERE org_id = $1 AND id IN (%s)`,
	"domain":         `SELECT 'domain', id, domain FROM domains WHERE org_id = $1 AND id IN (%s)`,
}

// AuditNames implements workspace.Store: one query, a UNION ALL of one
// SELECT per kind asked for.
func (s *Workspace) AuditNames(ctx context.Context, orgID string, refs map[workspace.AuditRef]bool) (map[workspace.AuditRef]string, error) {
	byType := map[string][]any{}
	for r := range refs {
		if auditNameQueries[r.Type] != "" {
			byType[r.Type] = append(byType[r.Type], r.ID)
		}
	}
	out := map[workspace.AuditRef]string{}
	if len(byType) == 0 {
		return out, nil
	}
	args := []any{orgID}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		parts = append(parts, fmt.Sprintf(auditNameQueries[t], placeholders(len(args)+1, len(byType[t]))))
		args = append(args, byType[t]...)
	}
	rows, err := s.r().QueryContext(ctx, strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r workspace.AuditRef
		var name string
		if err := rows.Scan(&r.Type, &r.ID, &name); err != nil {
			return nil, err
		}
		out[r] = name
	}
	return out, rows.Err()
}

// AuditTools implements workspace.Store: a loose index scan, one index seek
// per distinct tool, instead of reading every entry of the org.
func (s *Workspace) AuditTools(ctx context.Context, orgID string) ([]string, error) {
	return s.column(ctx, `WITH RECURSIVE t(tool) AS (
			SELECT MIN(tool) FROM audit_log WHERE org_id = $1
			UNION ALL
			SELECT (SELECT MIN(a.tool) FROM audit_log a WHERE a.org_id = $1 AND a.tool > t.tool) FROM t WHERE t.tool IS NOT NULL
		) SELECT tool FROM t WHERE tool IS NOT NULL`, orgID)
}

// column reads a query's one text column, in order; never nil.
func (s conn) column(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.r().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
