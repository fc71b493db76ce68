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

// CreateSession implements identity.Store: the session with its first
// refresh token's hash.
func (s *Identity) CreateSession(ctx context.Context, ss *identity.Session) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`, refresh_hash, first_passkey_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, $11, $12, $13, $14, $15)`,
		ss.ID, ss.UserID, ss.Via, nullString(ss.GrantID), nullString(ss.OrgID), ss.UserAgent, ss.IP,
		micros(ss.CreatedAt), micros(ss.ExpiresAt), micros(ss.LastUsedAt), aalOf(ss.Level), strings.Join(ss.Level.AMR, " "), ss.Level.Pending,
		nullString(ss.RefreshHash), nullString(ss.FirstPasskeyID))
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

// rotateSession is the session's half of RotateRefresh: its conditional
// UPDATE, rechecked against a concurrent rotation, lets exactly one caller
// through (and a revoked session stops everything). Arguments: session,
// presented hash, now, new expiry, successor's hash.
const rotateSession = `UPDATE sessions SET refresh_hash = $5, last_used_at = $3, expires_at = $4
		WHERE id = $1 AND refresh_hash = $2 AND revoked_at IS NULL AND expires_at > $3`

// keepRotated ends the history INSERT of a rotated hash: a token issued
// before tokens named their session is in the history already, as the live
// one, and its row is marked rotated.
const keepRotated = ` ON CONFLICT (token_hash) DO UPDATE SET rotated_at = EXCLUDED.rotated_at, expires_at = EXCLUDED.expires_at`

// rotateRefreshOnce is RotateRefresh as one PostgreSQL statement: only the
// caller that rotated keeps the hash it rotated away.
const rotateRefreshOnce = `WITH s AS (` + rotateSession + ` RETURNING id)
	INSERT INTO refresh_history (token_hash, session_id, rotated_at, expires_at) SELECT $2, id, $3, $4 FROM s` + keepRotated

// RotateRefresh implements identity.Store. On PostgreSQL it is one
// statement, which saves the hottest write path the round trips of BEGIN,
// another statement and COMMIT; SQLite, in process, runs the same two
// steps in a transaction.
func (s *Identity) RotateRefresh(ctx context.Context, hash string, next *identity.RefreshToken) error {
	now, expires := micros(next.CreatedAt), micros(next.ExpiresAt)
	if s.db.dialect.writableWith {
		return s.db.dialect.translate(affected(s.w().ExecContext(ctx, rotateRefreshOnce, next.SessionID, hash, now, expires, next.Hash)))
	}
	return s.inTx(ctx, func(c conn) error {
		w := c.w()
		if err := affected(w.ExecContext(ctx, rotateSession, next.SessionID, hash, now, expires, next.Hash)); err != nil {
			return err
		}
		_, err := w.ExecContext(ctx, `INSERT INTO refresh_history (token_hash, session_id, rotated_at, expires_at) VALUES ($1, $2, $3, $4)`+keepRotated,
			hash, next.SessionID, now, expires)
		return c.db.dialect.translate(err)
	})
}

// PruneRefreshHistory deletes the rotated refresh tokens that expired
// before before: presented now, they are refused as expired, whatever the
// history says. It also clears those of deleted sessions, which no foreign
// key removes.
func (s *Identity) PruneRefreshHistory(ctx context.Context, before time.Time) (int, error) {
	return changed(s.w().ExecContext(ctx, `DELETE FROM refresh_history WHERE expires_at < $1`, micros(before)))
}

// refreshOf joins session s to the history row h of the token $2 (when it
// is one the session rotated away), and tokenColumns reads the token's
// state: live (it is s's live token), or h's rotation and expiry. The
// WHERE of a read (refreshFound) keeps rows where either holds; a history
// row not rotated is a token from before tokens named their session, found
// there by RefreshSessionOf, and is the session's live one (the migration
// made it so) until it is rotated.
const (
	refreshOf    = `sessions s LEFT JOIN refresh_history h ON h.token_hash = $2 AND h.session_id = s.id`
	refreshFound = `s.id = $1 AND (s.refresh_hash = $2 OR h.rotated_at IS NOT NULL)`
	tokenColumns = `COALESCE(s.refresh_hash = $2, FALSE), h.rotated_at, h.expires_at`
)

// tokenState receives tokenColumns.
type tokenState struct {
	live             bool
	rotated, expires sql.NullInt64
}

func (ts *tokenState) dest() []any { return []any{&ts.live, &ts.rotated, &ts.expires} }

// token is the refresh token hashed hash of ss as ts read it: the live one
// ends with its session.
func (ts *tokenState) token(hash string, ss *identity.Session) *identity.RefreshToken {
	if ts.live {
		return &identity.RefreshToken{Hash: hash, SessionID: ss.ID, ExpiresAt: ss.ExpiresAt}
	}
	return &identity.RefreshToken{Hash: hash, SessionID: ss.ID, ExpiresAt: fromMicros(ts.expires.Int64), RotatedAt: fromNullMicros(ts.rotated)}
}

// RefreshToken implements identity.Store.
func (s *Identity) RefreshToken(ctx context.Context, sid, hash string) (*identity.RefreshToken, error) {
	var ts tokenState
	var expires int64
	err := s.r().QueryRowContext(ctx, `SELECT s.expires_at, `+tokenColumns+` FROM `+refreshOf+` WHERE `+refreshFound, sid, hash).
		Scan(append([]any{&expires}, ts.dest()...)...)
	if err != nil {
		return nil, s.one(err)
	}
	return ts.token(hash, &identity.Session{ID: sid, ExpiresAt: fromMicros(expires)}), nil
}

// RefreshSessionOf implements identity.Store.
func (s *Identity) RefreshSessionOf(ctx context.Context, hash string) (string, error) {
	var sid string
	err := s.r().QueryRowContext(ctx, `SELECT session_id FROM refresh_history WHERE token_hash = $1`, hash).Scan(&sid)
	return sid, s.one(err)
}

// RefreshSession implements identity.Store: the read of a refresh's
// careful path as one query.
func (s *Identity) RefreshSession(ctx context.Context, sid, hash string) (*identity.RefreshRead, error) {
	var ts tokenState
	read, err := s.scanRefreshRead(s.r().QueryRowContext(ctx, `SELECT `+s.refreshReadColumns()+`, `+tokenColumns+`
		FROM `+refreshOf+` JOIN users u ON u.id = s.user_id
		LEFT JOIN orgs o ON o.id = COALESCE(s.org_id, u.default_org_id)
		LEFT JOIN memberships m ON m.org_id = o.id AND m.user_id = u.id
		WHERE `+refreshFound, sid, hash), true, ts.dest()...)
	if err != nil {
		return nil, s.one(err)
	}
	read.Token = ts.token(hash, read.Session)
	return read, nil
}

// BrowserRead implements identity.Store: the read of every signed-in page
// view, without RefreshSession's org and membership.
func (s *Identity) BrowserRead(ctx context.Context, sid, hash string) (*identity.RefreshRead, error) {
	read, err := s.scanRefreshRead(s.r().QueryRowContext(ctx, `SELECT `+sessionUserColumns+`
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.id = $1 AND s.refresh_hash = $2`, sid, hash), false)
	if err != nil {
		return nil, s.one(err)
	}
	read.Token = &identity.RefreshToken{Hash: hash, SessionID: sid, ExpiresAt: read.Session.ExpiresAt}
	return read, nil
}

// sessionUserColumns are session s and user u, as scanRefreshRead reads
// them.
const sessionUserColumns = `s.id, s.user_id, s.via, s.grant_id, s.org_id, s.user_agent, s.ip, s.created_at, s.expires_at, s.last_used_at, s.revoked_at, s.aal, s.amr, s.mfa_pending,
			u.id, u.email, u.email_key, u.name, u.avatar_url, u.password_hash, u.email_verified, u.default_org_id, u.created_at, u.updated_at,
			u.disabled_at, u.language`

// refreshReadColumns are the columns scanRefreshRead reads with org:
// sessionUserColumns, then org o with membership m.
func (s *Identity) refreshReadColumns() string {
	return sessionUserColumns + `, ` + s.orgRoleColumns()
}

// scanRefreshRead reads a row of sessionUserColumns, followed by the
// org's (refreshReadColumns) when withOrg, then into more. The token is
// the caller's to fill in.
func (s *Identity) scanRefreshRead(row interface{ Scan(...any) error }, withOrg bool, more ...any) (*identity.RefreshRead, error) {
	var org nullOrg
	var ss *identity.Session
	u, err := scanUser(scanFunc(func(user ...any) error {
		var err error
		ss, err = scanSession(scanFunc(func(sess ...any) error {
			dest := append(sess, user...)
			if withOrg {
				dest = append(dest, org.dest()...)
			}
			return row.Scan(append(dest, more...)...)
		}))
		return err
	}))
	if err != nil {
		return nil, err
	}
	o, role := org.get()
	return &identity.RefreshRead{Session: ss, User: u, Org: o, Role: role}, nil
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

// RefreshOnce implements identity.Store: the check, the rotation and the
// read of a sign-in session's refresh in one step, shared with the
// refreshes that queue beside it (refreshBatches): on PostgreSQL one
// statement, on SQLite one write transaction. ok is false when nothing
// was rotated (the caller takes the careful path, which tells why), and
// inside a transaction, which a batch cannot join.
func (s *Identity) RefreshOnce(ctx context.Context, sid, hash string, next *identity.RefreshToken, p identity.SessionPolicy) (*identity.RefreshRead, bool, error) {
	if s.tx != nil {
		return nil, false, nil
	}
	read, err := s.db.refreshes.do(ctx, s, &refreshCall{ctx: ctx, sid: sid, hash: hash, next: next, policy: p})
	if err != nil || read == nil {
		return nil, false, err
	}
	next.SessionID, next.ExpiresAt = read.Session.ID, read.Session.ExpiresAt
	read.Token = &identity.RefreshToken{Hash: hash, SessionID: sid, ExpiresAt: read.Session.ExpiresAt}
	return read, true, nil
}

// SessionCreated implements workspace.Store.
func (s *Workspace) SessionCreated(ctx context.Context, id string) (time.Time, error) {
	var created int64
	err := s.r().QueryRowContext(ctx, `SELECT created_at FROM sessions WHERE id = $1`, id).Scan(&created)
	return fromMicros(created), s.one(err)
}
