package sqlstore

import (
	"context"
	"database/sql"
	"github.com/gatehouse/gatehouse"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// LatestEmailToken implements identity.Store.
func (s *Identity) LatestEmailToken(ctx context.Context, userID, purpose string) (*identity.EmailToken, error) {
	t := identity.EmailToken{UserID: userID, Purpose: purpose}
	var created, expires int64
	var used sql.NullInt64
	err := s.r().QueryRowContext(ctx, `SELECT token_hash, email, created_at, expires_at, used_at FROM email_tokens
		WHERE user_id = $1 AND purpose = $2 ORDER BY created_at DESC LIMIT 1`, userID, purpose).
		Scan(&t.Hash, &t.Email, &created, &expires, &used)
	if err != nil {
		return nil, s.one(err)
	}
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromMicros(created), fromMicros(expires), fromNullMicros(used)
	return &t, nil
}

// UserOrgs implements identity.Store.
func (s *Identity) UserOrgs(ctx context.Context, userID string) ([]workspace.OrgListing, error) {
	return s.userOrgs(ctx, userOrgsQuery+` ORDER BY m.joined_at, o.id`, userID)
}

// UserOrg implements identity.Store: the listing of one org of the user;
// ErrNotFound when they are not a member of a live org of that id.
func (s *Identity) UserOrg(ctx context.Context, userID, orgID string) (*workspace.OrgListing, error) {
	orgs, err := s.userOrgs(ctx, userOrgsQuery+` AND o.id = $2`, userID, orgID)
	if err != nil {
		return nil, err
	}
	if len(orgs) == 0 {
		return nil, gatehouse.ErrNotFound
	}
	return &orgs[0], nil
}

// userOrgsQuery lists the live orgs of user $1 with their member counts.
const userOrgsQuery = `SELECT o.id, o.name, o.slug, o.avatar_url, o.kind, o.owner_id, o.created_at, o.deleted_at, m.role,
			(SELECT COUNT(*) FROM memberships c WHERE c.org_id = o.id)
		FROM memberships m JOIN orgs o ON o.id = m.org_id
		WHERE m.user_id = $1 AND o.deleted_at IS NULL`

func (s *Identity) userOrgs(ctx context.Context, query string, args ...any) ([]workspace.OrgListing, error) {
	rows, err := s.r().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []workspace.OrgListing
	for rows.Next() {
		var l workspace.OrgListing
		var owner sql.NullString
		var created int64
		var deleted sql.NullInt64
		if err := rows.Scan(&l.ID, &l.Name, &l.Slug, &l.AvatarURL, &l.Kind, &owner, &created, &deleted, &l.Role, &l.MemberCount); err != nil {
			return nil, err
		}
		l.OwnerID, l.CreatedAt = owner.String, fromMicros(created)
		out = append(out, l)
	}
	return out, rows.Err()
}

// OrgCounts implements workspace.Store.
func (s *Workspace) OrgCounts(ctx context.Context, orgID string) (members, owners int, err error) {
	err = s.r().QueryRowContext(ctx, `SELECT COUNT(*), COUNT(CASE WHEN role = 'owner' THEN 1 END) FROM memberships WHERE org_id = $1`, orgID).
		Scan(&members, &owners)
	return members, owners, err
}

// SoftDeleteOrg implements workspace.Store. The org's domain claims go with
// it, so a domain it verified can be claimed by another org.
func (s *Workspace) SoftDeleteOrg(ctx context.Context, orgID string, at time.Time) error {
	err := s.revoke(ctx, revocation.KindOrg, at, `SELECT id AS subject, '' AS org_id FROM orgs WHERE id = $1 AND deleted_at IS NULL`, []any{orgID},
		func(c conn) error {
			return affected(c.w().ExecContext(ctx, `UPDATE orgs SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL`, orgID, micros(at)))
		})
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `DELETE FROM domains WHERE org_id = $1`, orgID)
	return err
}

// DeleteUser implements identity.Store. Memberships, sessions, refresh
// tokens, user keys, grants and team memberships go with the user (ON DELETE
// CASCADE); default-org pointers at nothing are harmless.
func (s *Identity) DeleteUser(ctx context.Context, userID string, at time.Time) error {
	return s.revoke(ctx, revocation.KindUser, at, `SELECT id AS subject, '' AS org_id FROM users WHERE id = $1`, []any{userID}, func(c conn) error {
		return affected(c.w().ExecContext(ctx, `DELETE FROM users WHERE id = $1`, userID))
	})
}

// ListSessions implements identity.Store: sign-in sessions only (OAuth
// sessions are listed as grants).
func (s *Identity) ListSessions(ctx context.Context, userID string, now time.Time) ([]identity.Session, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions
		WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 AND grant_id IS NULL
		ORDER BY created_at DESC, id DESC`, userID, micros(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []identity.Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *ss)
	}
	return out, rows.Err()
}

// RevokeTokensIssuedBefore implements identity.Store: a KindBefore row for
// the user (the sub of a personal key's tokens) and for each live org key
// the user created (an org key's tokens name the key as sub and key_id).
func (s *Identity) RevokeTokensIssuedBefore(ctx context.Context, userID string, at time.Time) error {
	return s.revoke(ctx, revocation.KindBefore, at, `SELECT id AS subject, '' AS org_id FROM users WHERE id = $1
		UNION ALL SELECT id, '' FROM api_keys WHERE kind = 'org' AND created_by = $1 AND revoked_at IS NULL`,
		[]any{userID}, func(conn) error { return nil })
}

// RevokeUserSessions implements identity.Store. The sessions still to be
// opened go with them: the unspent authorization codes of grants another
// sign-in session approved (every one when keep is "") and every device
// code approved and not yet collected (its approving session is not
// recorded), so that a consent given before a disable, a password change or
// a mailbox claim cannot open a session after it.
func (s *Identity) RevokeUserSessions(ctx context.Context, userID, keep string, at time.Time) error {
	return s.revoke(ctx, revocation.KindSession, at, `SELECT id AS subject, '' AS org_id FROM sessions WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`,
		[]any{userID, keep}, func(c conn) error {
			if _, err := c.w().ExecContext(ctx, `UPDATE sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`, userID, keep, micros(at)); err != nil {
				return err
			}
			if _, err := c.w().ExecContext(ctx, `DELETE FROM oauth_codes WHERE used_at IS NULL AND grant_id IN
				(SELECT id FROM oauth_grants WHERE user_id = $1 AND ($2 = '' OR session_id <> $2))`, userID, keep); err != nil {
				return err
			}
			_, err := c.w().ExecContext(ctx, `UPDATE oauth_device_codes SET status = 'denied' WHERE user_id = $1 AND status = 'approved'`, userID)
			return err
		})
}

// ListGrants implements identity.Store.
func (s *Identity) ListGrants(ctx context.Context, userID string) ([]identity.Grant, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, client_id, client_name, org_id, scope, resource, created_at FROM oauth_grants
		WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []identity.Grant
	for rows.Next() {
		g := identity.Grant{UserID: userID}
		var created int64
		if err := rows.Scan(&g.ID, &g.ClientID, &g.ClientName, &g.OrgID, &g.Scope, &g.Resource, &created); err != nil {
			return nil, err
		}
		g.CreatedAt = fromMicros(created)
		out = append(out, g)
	}
	return out, rows.Err()
}

// RevokeGrant implements identity.Store.
func (s *Identity) RevokeGrant(ctx context.Context, userID, grantID string, at time.Time) error {
	err := affected(s.w().ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = $3 WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL`, grantID, userID, micros(at)))
	if err != nil {
		return err
	}
	return s.revoke(ctx, revocation.KindSession, at, `SELECT id AS subject, '' AS org_id FROM sessions WHERE grant_id = $1 AND revoked_at IS NULL`,
		[]any{grantID}, func(c conn) error {
			_, err := c.w().ExecContext(ctx, `UPDATE sessions SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL`, grantID, micros(at))
			return err
		})
}

// RevokeUserGrants implements identity.Store.
func (s *Identity) RevokeUserGrants(ctx context.Context, userID string, at time.Time) (int, error) {
	return changed(s.w().ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL`, userID, micros(at)))
}

// CreateGrant implements identity.Store.
func (s *Identity) CreateGrant(ctx context.Context, g *identity.Grant) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO oauth_grants (id, user_id, client_id, client_name, org_id, scope, resource, created_at, aal, session_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, g.ID, g.UserID, g.ClientID, g.ClientName, g.OrgID, g.Scope, g.Resource, micros(g.CreatedAt), keyLevel(g.AAL),
		g.SessionID)
	return s.db.dialect.translate(err)
}

// GrantByID implements identity.Store.
func (s *Identity) GrantByID(ctx context.Context, id string) (*identity.Grant, error) {
	lock := ""
	if s.tx != nil {
		lock = s.db.dialect.forUpdate
	}
	g := identity.Grant{ID: id}
	var created int64
	var revoked sql.NullInt64
	err := s.w().QueryRowContext(ctx, `SELECT user_id, client_id, client_name, org_id, scope, resource, created_at, revoked_at, aal
		FROM oauth_grants WHERE id = $1`+lock, id).
		Scan(&g.UserID, &g.ClientID, &g.ClientName, &g.OrgID, &g.Scope, &g.Resource, &created, &revoked, &g.AAL)
	if err != nil {
		return nil, s.one(err)
	}
	g.CreatedAt, g.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return &g, nil
}
