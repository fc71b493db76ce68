package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/scim"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

var _ scim.Store = (*SCIM)(nil)

// SCIM implements scim.Store: SCIM tokens and directory users, with the
// identity store's tables (accounts, and through it workspace's) on the
// same connection or transaction.
type SCIM struct{ Identity }

// SCIM returns the SCIM store.
func (db *DB) SCIM() *SCIM { return &SCIM{Identity{Workspace{conn{db: db}}}} }

// Tx implements scim.Store.
func (s *SCIM) Tx(ctx context.Context, fn func(tx scim.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&SCIM{Identity{Workspace{c}}}) })
}

// CreateToken implements scim.Store.
func (s *SCIM) CreateToken(ctx context.Context, t *scim.Token) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO scim_tokens (id, org_id, name, prefix, hash, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		t.ID, t.OrgID, t.Name, t.Prefix, t.Hash, t.CreatedBy, micros(t.CreatedAt))
	return s.db.dialect.translate(err)
}

const scimTokenColumns = `t.id, t.org_id, t.name, t.prefix, t.hash, t.created_by, t.created_at`

func scanSCIMToken(row interface{ Scan(...any) error }) (*scim.Token, error) {
	var t scim.Token
	var created int64
	if err := row.Scan(&t.ID, &t.OrgID, &t.Name, &t.Prefix, &t.Hash, &t.CreatedBy, &created); err != nil {
		return nil, err
	}
	t.CreatedAt = fromMicros(created)
	return &t, nil
}

// Tokens implements scim.Store.
func (s *SCIM) Tokens(ctx context.Context, orgID string) ([]scim.Token, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+scimTokenColumns+` FROM scim_tokens t WHERE t.org_id = $1 AND t.deleted_at IS NULL
		ORDER BY t.created_at DESC, t.id DESC`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []scim.Token{}
	for rows.Next() {
		t, err := scanSCIMToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// DeleteToken implements scim.Store.
func (s *SCIM) DeleteToken(ctx context.Context, orgID, id string, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE scim_tokens SET deleted_at = $3 WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
		orgID, id, micros(at)))
}

// TokenByHash implements scim.Store. It reads the writer, so a token
// deleted a moment ago is never found on a lagging reader.
func (s *SCIM) TokenByHash(ctx context.Context, hash string) (*scim.Token, error) {
	t, err := scanSCIMToken(s.w().QueryRowContext(ctx, `SELECT `+scimTokenColumns+` FROM scim_tokens t JOIN orgs o ON o.id = t.org_id
		WHERE t.hash = $1 AND t.deleted_at IS NULL AND o.deleted_at IS NULL AND o.kind = 'team'`, hash))
	return t, s.one(err)
}

const dirUserColumns = `id, org_id, user_name, user_name_key, external_id, display_name, active, user_id, resource, created_at, updated_at`

func scanDirUser(row interface{ Scan(...any) error }) (*scim.DirUser, error) {
	var u scim.DirUser
	var userID sql.NullString
	var resource string
	var created, updated int64
	if err := row.Scan(&u.ID, &u.OrgID, &u.UserName, &u.UserNameKey, &u.ExternalID, &u.DisplayName, &u.Active, &userID, &resource,
		&created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(resource), &u.Resource); err != nil {
		return nil, err
	}
	u.UserID, u.CreatedAt, u.UpdatedAt = userID.String, fromMicros(created), fromMicros(updated)
	return &u, nil
}

func resourceJSON(u *scim.DirUser) (string, error) {
	if u.Resource == nil {
		return "{}", nil
	}
	b, err := json.Marshal(u.Resource)
	return string(b), err
}

// CreateDirUser implements scim.Store.
func (s *SCIM) CreateDirUser(ctx context.Context, u *scim.DirUser) error {
	res, err := resourceJSON(u)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO scim_users (`+dirUserColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		u.ID, u.OrgID, u.UserName, u.UserNameKey, u.ExternalID, u.DisplayName, u.Active, nullString(u.UserID), res, micros(u.CreatedAt), micros(u.UpdatedAt))
	return s.db.dialect.translate(err)
}

// DirUser implements scim.Store.
func (s *SCIM) DirUser(ctx context.Context, orgID, id string) (*scim.DirUser, error) {
	u, err := scanDirUser(s.w().QueryRowContext(ctx, `SELECT `+dirUserColumns+` FROM scim_users WHERE org_id = $1 AND id = $2`, orgID, id))
	return u, s.one(err)
}

// UpdateDirUser implements scim.Store.
func (s *SCIM) UpdateDirUser(ctx context.Context, u *scim.DirUser) error {
	res, err := resourceJSON(u)
	if err != nil {
		return err
	}
	err = affected(s.w().ExecContext(ctx, `UPDATE scim_users SET user_name = $3, user_name_key = $4, external_id = $5, display_name = $6,
		active = $7, user_id = $8, resource = $9, updated_at = $10 WHERE org_id = $1 AND id = $2`,
		u.OrgID, u.ID, u.UserName, u.UserNameKey, u.ExternalID, u.DisplayName, u.Active, nullString(u.UserID), res, micros(u.UpdatedAt)))
	return s.db.dialect.translate(err)
}

// DeleteDirUser implements scim.Store.
func (s *SCIM) DeleteDirUser(ctx context.Context, orgID, id string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM scim_users WHERE org_id = $1 AND id = $2`, orgID, id))
}

// DirUsers implements scim.Store.
func (s *SCIM) DirUsers(ctx context.Context, orgID string, by scim.Lookup) ([]scim.DirUser, error) {
	q, args := `SELECT `+dirUserColumns+` FROM scim_users WHERE org_id = $1`, []any{orgID}
	switch {
	case by.UserNameKey != "":
		// At most one row (scim_users_name is unique) and no ORDER BY, so
		// PostgreSQL seeks that index rather than walking the org's rows
		// in scim_users_list for their order (EXPLAIN, both databases).
		q, args = q+` AND user_name_key = $2`, append(args, by.UserNameKey)
	case by.ExternalID != "":
		q, args = q+` AND external_id = $2 ORDER BY created_at, id`, append(args, by.ExternalID)
	default:
		q += ` ORDER BY created_at, id`
	}
	rows, err := s.r().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanDirUsers(rows)
}

// RevokeMemberKeys implements scim.Store: the keys are recorded in the
// revocations, so every instance refuses their tokens within a poll.
func (s *SCIM) RevokeMemberKeys(ctx context.Context, orgID, userID string, at time.Time) (int, error) {
	var n int
	err := s.revoke(ctx, revocation.KindKey, at, `SELECT id AS subject, '' AS org_id FROM api_keys WHERE org_id = $1 AND (user_id = $2 OR created_by = $2)
		AND revoked_at IS NULL`, []any{orgID, userID}, func(c conn) (err error) {
		n, err = changed(c.w().ExecContext(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE org_id = $1 AND (user_id = $2 OR created_by = $2)
			AND revoked_at IS NULL`, orgID, userID, micros(at)))
		return err
	})
	return n, err
}

// PendingProvisions implements workspace.Tables: the pending directory
// users of address key, in live orgs, with their orgs' provisioning role.
func (s *Workspace) PendingProvisions(ctx context.Context, key string) ([]workspace.Provision, error) {
	rows, err := s.w().QueryContext(ctx, `SELECT u.id, u.org_id, COALESCE(st.provision_role, '') FROM scim_users u JOIN orgs o ON o.id = u.org_id
		LEFT JOIN scim_settings st ON st.org_id = u.org_id
		WHERE u.user_name_key = $1 AND u.user_id IS NULL AND u.active AND o.deleted_at IS NULL ORDER BY u.created_at, u.id`, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []workspace.Provision{}
	for rows.Next() {
		var p workspace.Provision
		if err := rows.Scan(&p.ID, &p.OrgID, &p.Role); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// AttachProvision implements workspace.Tables.
func (s *Workspace) AttachProvision(ctx context.Context, id, userID string) error {
	return affected(s.w().ExecContext(ctx, `UPDATE scim_users SET user_id = $2 WHERE id = $1 AND user_id IS NULL`, id, userID))
}

// CreateGroup implements scim.Store.
func (s *SCIM) CreateGroup(ctx context.Context, g *scim.Group) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO scim_groups (team_id, org_id, external_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)`,
		g.TeamID, g.OrgID, g.ExternalID, micros(g.CreatedAt), micros(g.UpdatedAt))
	return s.db.dialect.translate(err)
}

const groupSelect = `SELECT g.team_id, g.org_id, t.name, g.external_id, g.created_at, g.updated_at FROM scim_groups g
	JOIN teams t ON t.id = g.team_id WHERE t.deleted_at IS NULL AND g.org_id = $1`

func scanGroup(row interface{ Scan(...any) error }) (*scim.Group, error) {
	var g scim.Group
	var created, updated int64
	if err := row.Scan(&g.TeamID, &g.OrgID, &g.DisplayName, &g.ExternalID, &created, &updated); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &g, nil
}

// Group implements scim.Store.
func (s *SCIM) Group(ctx context.Context, orgID, teamID string) (*scim.Group, error) {
	g, err := scanGroup(s.w().QueryRowContext(ctx, groupSelect+` AND g.team_id = $2`, orgID, teamID))
	return g, s.one(err)
}

// Groups implements scim.Store.
func (s *SCIM) Groups(ctx context.Context, orgID string) ([]scim.Group, error) {
	rows, err := s.r().QueryContext(ctx, groupSelect+` ORDER BY g.created_at, g.team_id`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []scim.Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *g)
	}
	return out, rows.Err()
}

// UpdateGroup implements scim.Store.
func (s *SCIM) UpdateGroup(ctx context.Context, g *scim.Group) error {
	return affected(s.w().ExecContext(ctx, `UPDATE scim_groups SET external_id = $2, updated_at = $3 WHERE team_id = $1`,
		g.TeamID, g.ExternalID, micros(g.UpdatedAt)))
}

// DeleteGroup implements scim.Store.
func (s *SCIM) DeleteGroup(ctx context.Context, teamID string) error {
	return affected(s.w().ExecContext(ctx, `DELETE FROM scim_groups WHERE team_id = $1`, teamID))
}

// GroupMembers implements scim.Store.
func (s *SCIM) GroupMembers(ctx context.Context, teamID string) ([]scim.DirUser, error) {
	rows, err := s.w().QueryContext(ctx, `SELECT `+prefixed("u.", dirUserColumns)+` FROM scim_group_members m JOIN scim_users u ON u.id = m.scim_user_id
		WHERE m.team_id = $1 ORDER BY u.created_at, u.id`, teamID)
	if err != nil {
		return nil, err
	}
	return scanDirUsers(rows)
}

// AddGroupMember implements scim.Store.
func (s *SCIM) AddGroupMember(ctx context.Context, teamID, dirUserID string) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO scim_group_members (team_id, scim_user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, teamID, dirUserID)
	return err
}

// RemoveGroupMember implements scim.Store.
func (s *SCIM) RemoveGroupMember(ctx context.Context, teamID, dirUserID string) error {
	_, err := s.w().ExecContext(ctx, `DELETE FROM scim_group_members WHERE team_id = $1 AND scim_user_id = $2`, teamID, dirUserID)
	return err
}

// ProvisionTeams implements workspace.Tables: the live teams of the
// groups directory user dirUserID is in.
func (s *Workspace) ProvisionTeams(ctx context.Context, dirUserID string) ([]string, error) {
	return s.column(ctx, `SELECT m.team_id FROM scim_group_members m JOIN teams t ON t.id = m.team_id
		WHERE m.scim_user_id = $1 AND t.deleted_at IS NULL ORDER BY m.team_id`, dirUserID)
}

// Settings implements scim.Store.
func (s *SCIM) Settings(ctx context.Context, orgID string) (*scim.Settings, error) {
	set := scim.Settings{OrgID: orgID}
	var at int64
	err := s.w().QueryRowContext(ctx, `SELECT provision_role, updated_by, updated_at FROM scim_settings WHERE org_id = $1`, orgID).
		Scan(&set.ProvisionRole, &set.UpdatedBy, &at)
	if err != nil {
		return nil, s.one(err)
	}
	set.UpdatedAt = fromMicros(at)
	return &set, nil
}

// SetSettings implements scim.Store.
func (s *SCIM) SetSettings(ctx context.Context, set *scim.Settings) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO scim_settings (org_id, provision_role, updated_by, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id) DO UPDATE SET provision_role = excluded.provision_role, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		set.OrgID, set.ProvisionRole, set.UpdatedBy, micros(set.UpdatedAt))
	return s.db.dialect.translate(err)
}

// scanDirUsers reads every row of rows as a directory user and closes
// them.
func scanDirUsers(rows *sql.Rows) ([]scim.DirUser, error) {
	defer rows.Close()
	out := []scim.DirUser{}
	for rows.Next() {
		u, err := scanDirUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *u)
	}
	return out, rows.Err()
}
