package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/revocation"
)

const sessionColumns = `id, user_id, via, grant_id, org_id, user_agent, ip, created_at, expires_at, last_used_at, revoked_at, aal, amr, mfa_pending`

func scanSession(row interface{ Scan(...any) error }) (*identity.Session, error) {
	var ss identity.Session
	var grant, org sql.NullString
	var created, expires, used int64
	var revoked sql.NullInt64
	var amr string
	if err := row.Scan(&ss.ID, &ss.UserID, &ss.Via, &grant, &org, &ss.UserAgent, &ss.IP, &created, &expires, &used, &revoked,
		&ss.Level.AAL, &amr, &ss.Level.Pending); err != nil {
		return nil, err
	}
	ss.Level.AMR = strings.Fields(amr)
	ss.GrantID, ss.OrgID = grant.String, org.String
	ss.CreatedAt, ss.ExpiresAt, ss.LastUsedAt, ss.RevokedAt = fromMicros(created), fromMicros(expires), fromMicros(used), fromNullMicros(revoked)
	return &ss, nil
}

// CreateSession implements identity.Store.
func (s *Identity) CreateSession(ctx context.Context, ss *identity.Session) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, $11, $12, $13)`,
		ss.ID, ss.UserID, ss.Via, nullString(ss.GrantID), nullString(ss.OrgID), ss.UserAgent, ss.IP,
		micros(ss.CreatedAt), micros(ss.ExpiresAt), micros(ss.LastUsedAt), aalOf(ss.Level), strings.Join(ss.Level.AMR, " "), ss.Level.Pending)
	return s.db.dialect.translate(err)
}

// SessionByID implements identity.Store.
func (s *Identity) SessionByID(ctx context.Context, id string) (*identity.Session, error) {
	ss, err := scanSession(s.r().QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, id))
	return ss, s.one(err)
}

// RevokeSession implements identity.Store.
func (s *Identity) RevokeSession(ctx context.Context, id string, at time.Time) (bool, error) {
	err := s.revoke(ctx, revocation.KindSession, at, `SELECT id AS subject, '' AS org_id FROM sessions WHERE id = $1 AND revoked_at IS NULL`, []any{id},
		func(c conn) error {
			return affected(c.w().ExecContext(ctx, `UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, micros(at)))
		})
	if err == gatehouse.ErrNotFound {
		return false, nil
	}
	return err == nil, err
}

// InsertRefreshToken implements identity.Store.
func (s *Identity) InsertRefreshToken(ctx context.Context, t *identity.RefreshToken) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		t.Hash, t.SessionID, micros(t.CreatedAt), micros(t.ExpiresAt))
	return s.db.dialect.translate(err)
}

func scanRefresh(row interface{ Scan(...any) error }) (*identity.RefreshToken, error) {
	var t identity.RefreshToken
	var created, expires int64
	var rotated sql.NullInt64
	if err := row.Scan(&t.Hash, &t.SessionID, &created, &expires, &rotated); err != nil {
		return nil, err
	}
	t.CreatedAt, t.ExpiresAt, t.RotatedAt = fromMicros(created), fromMicros(expires), fromNullMicros(rotated)
	return &t, nil
}

// rotateRefreshOnce is RotateRefresh as one PostgreSQL statement. The
// session row is locked first, the order account deletion cascades in, and
// a revoked session stops everything. The token's conditional UPDATE,
// rechecked against a concurrent rotation, lets exactly one caller through,
// and the INSERT stores a successor only for that one; a caller that lost
// the race has only recorded a use of the live session.
const rotateRefreshOnce = `WITH s AS (
		UPDATE sessions SET last_used_at = $3, expires_at = $4
		WHERE id = $1 AND revoked_at IS NULL
		RETURNING id
	), r AS (
		UPDATE refresh_tokens SET rotated_at = $3
		WHERE token_hash = $2 AND session_id = (SELECT id FROM s) AND rotated_at IS NULL AND expires_at > $3
		RETURNING session_id
	)
	INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) SELECT $5, session_id, $3, $4 FROM r`

// RotateRefresh implements identity.Store. On PostgreSQL it is one
// statement, which saves the hottest write path the round trips of BEGIN,
// two more statements and COMMIT; SQLite, in process, runs the same three
// steps in a transaction.
func (s *Identity) RotateRefresh(ctx context.Context, hash string, next *identity.RefreshToken) error {
	now, expires := micros(next.CreatedAt), micros(next.ExpiresAt)
	if s.db.dialect.writableWith {
		return s.db.dialect.translate(affected(s.w().ExecContext(ctx, rotateRefreshOnce, next.SessionID, hash, now, expires, next.Hash)))
	}
	return s.inTx(ctx, func(c conn) error {
		w := c.w()
		if err := affected(w.ExecContext(ctx, `UPDATE sessions SET last_used_at = $2, expires_at = $3 WHERE id = $1 AND revoked_at IS NULL`,
			next.SessionID, now, expires)); err != nil {
			return err
		}
		if err := affected(w.ExecContext(ctx, `UPDATE refresh_tokens SET rotated_at = $3
			WHERE token_hash = $1 AND session_id = $2 AND rotated_at IS NULL AND expires_at > $3`, hash, next.SessionID, now)); err != nil {
			return err
		}
		return (&Identity{Workspace{c}}).InsertRefreshToken(ctx, next)
	})
}

// RefreshTokenByHash implements identity.Store.
func (s *Identity) RefreshTokenByHash(ctx context.Context, hash string) (*identity.RefreshToken, error) {
	t, err := scanRefresh(s.r().QueryRowContext(ctx, `SELECT token_hash, session_id, created_at, expires_at, rotated_at FROM refresh_tokens WHERE token_hash = $1`, hash))
	return t, s.one(err)
}

// RefreshSession implements identity.Store: the hot read of a refresh as
// one query.
func (s *Identity) RefreshSession(ctx context.Context, hash string) (*identity.RefreshRead, error) {
	read, err := s.scanRefreshRead(s.r().QueryRowContext(ctx, `SELECT `+s.refreshReadColumns()+`
		FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
		LEFT JOIN orgs o ON o.id = COALESCE(s.org_id, u.default_org_id)
		LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = u.id
		WHERE r.token_hash = $1`, hash), true)
	return read, s.one(err)
}

// BrowserRead implements identity.Store: the read of every signed-in page
// view, without RefreshSession's org and membership.
func (s *Identity) BrowserRead(ctx context.Context, hash string) (*identity.RefreshRead, error) {
	read, err := s.scanRefreshRead(s.r().QueryRowContext(ctx, `SELECT `+tokenReadColumns+`
		FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
		WHERE r.token_hash = $1`, hash), false)
	return read, s.one(err)
}

// tokenReadColumns are session s, user u and refresh token r, as
// scanRefreshRead reads them.
const tokenReadColumns = `s.id, s.user_id, s.via, s.grant_id, s.org_id, s.user_agent, s.ip, s.created_at, s.expires_at, s.last_used_at, s.revoked_at, s.aal, s.amr, s.mfa_pending,
			u.id, u.email, u.email_key, u.name, u.avatar_url, u.password_hash, u.email_verified, u.default_org_id, u.created_at, u.updated_at,
			r.token_hash, r.created_at, r.expires_at, r.rotated_at`

// refreshReadColumns are the columns scanRefreshRead reads with org:
// tokenReadColumns, then org o with membership m.
func (s *Identity) refreshReadColumns() string {
	return tokenReadColumns + `, ` + s.orgRoleColumns()
}

// scanRefreshRead reads a row of tokenReadColumns, followed by the org's
// (refreshReadColumns) when withOrg.
func (s *Identity) scanRefreshRead(row *sql.Row, withOrg bool) (*identity.RefreshRead, error) {
	var t identity.RefreshToken
	var created, expires int64
	var rotated sql.NullInt64
	var org nullOrg
	var ss *identity.Session
	u, err := scanUser(scanFunc(func(user ...any) error {
		var err error
		ss, err = scanSession(scanFunc(func(sess ...any) error {
			dest := append(append(sess, user...), &t.Hash, &created, &expires, &rotated)
			if withOrg {
				dest = append(dest, org.dest()...)
			}
			return row.Scan(dest...)
		}))
		return err
	}))
	if err != nil {
		return nil, err
	}
	t.SessionID = ss.ID
	t.CreatedAt, t.ExpiresAt, t.RotatedAt = fromMicros(created), fromMicros(expires), fromNullMicros(rotated)
	o, role := org.get()
	return &identity.RefreshRead{Token: &t, Session: ss, User: u, Org: o, Role: role}, nil
}

// CreateEmailToken implements identity.Store.
func (s *Identity) CreateEmailToken(ctx context.Context, t *identity.EmailToken) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO email_tokens (token_hash, purpose, email, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.Hash, t.Purpose, t.Email, nullString(t.UserID), micros(t.CreatedAt), micros(t.ExpiresAt))
	return s.db.dialect.translate(err)
}

// UseEmailToken implements identity.Store; like RotateRefreshToken, the
// conditional UPDATE makes the token single use under concurrency.
func (s *Identity) UseEmailToken(ctx context.Context, hash, purpose string, at time.Time) (*identity.EmailToken, error) {
	var t identity.EmailToken
	var user sql.NullString
	var created, expires int64
	var used sql.NullInt64
	err := s.w().QueryRowContext(ctx, `UPDATE email_tokens SET used_at = $3
		WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3
		RETURNING token_hash, purpose, email, user_id, created_at, expires_at, used_at`, hash, purpose, micros(at)).
		Scan(&t.Hash, &t.Purpose, &t.Email, &user, &created, &expires, &used)
	if err != nil {
		return nil, s.one(err)
	}
	t.UserID, t.CreatedAt, t.ExpiresAt, t.UsedAt = user.String, fromMicros(created), fromMicros(expires), fromNullMicros(used)
	return &t, nil
}

// AddAudit implements workspace.Store.
func (s conn) AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		e.ID, e.OrgID, e.Tool, e.Action, e.ActorID, e.TargetType, e.TargetID, e.Meta, micros(e.At))
	return s.db.dialect.translate(err)
}

// aalOf is the stored level of a: aal1 unless named.
func aalOf(a gatehouse.Assurance) string {
	if a.AAL == "" {
		return gatehouse.AAL1
	}
	return a.AAL
}

// refreshOnce is RefreshOnce as one PostgreSQL statement: the session is
// locked and used first (the order account deletion cascades in) when the
// token is live, unrotated and the session live, not an OAuth grant's and
// within its absolute lifetime ($5), and owing no second factor (a
// pending session's successor must not outlive it: the careful path); the token's conditional UPDATE lets
// exactly one caller through, its successor ends with the session, and the
// rows a refresh needs (session, user, token, org and role) come back.
const refreshOnce = `WITH s AS (
		UPDATE sessions SET last_used_at = $3, expires_at = LEAST($4, created_at + $5)
		WHERE id = (SELECT session_id FROM refresh_tokens WHERE token_hash = $1 AND rotated_at IS NULL AND expires_at > $3)
			AND revoked_at IS NULL AND grant_id IS NULL AND NOT mfa_pending AND created_at + $5 > $3
		RETURNING *
	), r AS (
		UPDATE refresh_tokens SET rotated_at = $3
		WHERE token_hash = $1 AND session_id = (SELECT id FROM s) AND rotated_at IS NULL AND expires_at > $3
		RETURNING *
	), n AS (
		INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at)
		SELECT CAST($2 AS TEXT), s.id, $3, s.expires_at FROM s JOIN r ON r.session_id = s.id
	)
	SELECT `

// RefreshOnce implements identity.Store: on PostgreSQL the check, the
// rotation and the read of a sign-in session's refresh in one round trip.
// ok is false when nothing was rotated (the caller takes the careful path,
// which tells why) and always on SQLite, whose in-process reads cost no
// round trip.
func (s *Identity) RefreshOnce(ctx context.Context, hash string, next *identity.RefreshToken, maxAge time.Duration) (*identity.RefreshRead, bool, error) {
	if !s.db.dialect.writableWith || s.tx != nil {
		return nil, false, nil
	}
	read, err := s.scanRefreshRead(s.w().QueryRowContext(ctx, refreshOnce+s.refreshReadColumns()+`
		FROM s JOIN r ON r.session_id = s.id JOIN users u ON u.id = s.user_id
		LEFT JOIN orgs o ON o.id = COALESCE(s.org_id, u.default_org_id)
		LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = u.id`,
		hash, next.Hash, micros(next.CreatedAt), micros(next.ExpiresAt), maxAge.Microseconds()), true)
	if err == sql.ErrNoRows {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.db.dialect.translate(err)
	}
	next.SessionID, next.ExpiresAt = read.Session.ID, read.Session.ExpiresAt
	return read, true, nil
}
