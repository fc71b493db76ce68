package sqlstore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/revocation"
	"github.com/gatehouse/gatehouse/internal/sso"
)

// SSO implements sso.Store: connections, flows and links, and through the
// embedded Workspace, workspace's tables on the same connection or
// transaction.
type SSO struct{ Workspace }

var _ sso.Store = (*SSO)(nil)

// SSO returns the SSO store.
func (db *DB) SSO() *SSO { return &SSO{Workspace{conn{db: db}}} }

// Tx implements sso.Store.
func (s *SSO) Tx(ctx context.Context, fn func(tx sso.Store) error) error {
	return s.inTx(ctx, func(c conn) error { return fn(&SSO{Workspace{c}}) })
}

// Identity implements sso.Store.
func (s *SSO) Identity() identity.Store { return &Identity{s.Workspace} }

const ssoColumns = `id, org_id, name, issuer, client_id, client_secret, scopes, default_role, enforce, domains, created_by, created_at, updated_at, protocol, saml, attributes, saml_sp_keys`

func scanConnection(row interface{ Scan(...any) error }) (*sso.Connection, error) {
	var c sso.Connection
	var secret, scopes, domains, saml, attrs, spKeys string
	var created, updated int64
	if err := row.Scan(&c.ID, &c.OrgID, &c.Name, &c.Issuer, &c.ClientID, &secret, &scopes, &c.DefaultRole, &c.Enforce, &domains,
		&c.CreatedBy, &created, &updated, &c.Protocol, &saml, &attrs, &spKeys); err != nil {
		return nil, err
	}
	if attrs != "" {
		if err := json.Unmarshal([]byte(attrs), &c.Mapping); err != nil {
			return nil, err
		}
	}
	if saml != "" {
		if err := json.Unmarshal([]byte(saml), &c.SAML); err != nil {
			return nil, err
		}
	}
	var err error
	if c.SealedSecret, err = base64.StdEncoding.DecodeString(secret); err != nil {
		return nil, err
	}
	if c.SealedSPKeys, err = base64.StdEncoding.DecodeString(spKeys); err != nil {
		return nil, err
	}
	c.Scopes = strings.Fields(scopes)
	if err := json.Unmarshal([]byte(domains), &c.Domains); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &c, nil
}

func connectionArgs(c *sso.Connection) ([]any, error) {
	domains, err := json.Marshal(nonNil(c.Domains))
	if err != nil {
		return nil, err
	}
	protocol, saml := sso.ProtocolOIDC, ""
	if c.SAML != nil {
		b, err := json.Marshal(c.SAML)
		if err != nil {
			return nil, err
		}
		protocol, saml = sso.ProtocolSAML, string(b)
	}
	attrs, err := json.Marshal(c.Mapping)
	if err != nil {
		return nil, err
	}
	return []any{c.ID, c.OrgID, c.Name, c.Issuer, c.ClientID, base64.StdEncoding.EncodeToString(c.SealedSecret), strings.Join(c.Scopes, " "),
		c.DefaultRole, c.Enforce, string(domains), c.CreatedBy, micros(c.CreatedAt), micros(c.UpdatedAt), protocol, saml, string(attrs),
		base64.StdEncoding.EncodeToString(c.SealedSPKeys)}, nil
}

// CreateConnection implements sso.Store.
func (s *SSO) CreateConnection(ctx context.Context, c *sso.Connection) error {
	args, err := connectionArgs(c)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO sso_connections (`+ssoColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`, args...)
	return s.db.dialect.translate(err)
}

// ConnectionByID implements sso.Store.
func (s *SSO) ConnectionByID(ctx context.Context, id string) (*sso.Connection, error) {
	c, err := scanConnection(s.r().QueryRowContext(ctx, `SELECT `+ssoColumns+` FROM sso_connections WHERE id = $1`, id))
	return c, s.one(err)
}

// ListConnections implements sso.Store.
func (s *SSO) ListConnections(ctx context.Context, orgID string) ([]sso.Connection, error) {
	return s.connections(ctx, `SELECT `+ssoColumns+` FROM sso_connections WHERE org_id = $1 ORDER BY created_at, id`, orgID)
}

// connections reads the connections query q selects (ssoColumns).
func (s *SSO) connections(ctx context.Context, q string, args ...any) ([]sso.Connection, error) {
	rows, err := s.r().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []sso.Connection{}
	for rows.Next() {
		c, err := scanConnection(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}

// UpdateConnection implements sso.Store. The SAML service-provider keys
// are left as they are: only SetSAMLKeys changes them.
func (s *SSO) UpdateConnection(ctx context.Context, c *sso.Connection) error {
	args, err := connectionArgs(c)
	if err != nil {
		return err
	}
	return affected(s.w().ExecContext(ctx, `UPDATE sso_connections SET name = $3, issuer = $4, client_id = $5, client_secret = $6, scopes = $7,
		default_role = $8, enforce = $9, domains = $10, updated_at = $13, protocol = $14, saml = $15, attributes = $16 WHERE id = $1 AND org_id = $2 AND created_by = $11 AND created_at = $12`, args[:16]...))
}

// DeleteConnection implements sso.Store: its domains, links and flows go
// with it.
func (s *SSO) DeleteConnection(ctx context.Context, id string) error {
	return s.inTx(ctx, func(c conn) error {
		for _, q := range []string{`DELETE FROM sso_domains WHERE connection_id = $1`, `DELETE FROM sso_links WHERE connection_id = $1`,
			`DELETE FROM sso_pending_links WHERE connection_id = $1`, `DELETE FROM sso_flows WHERE connection_id = $1`,
			`DELETE FROM sso_saml_assertions WHERE connection_id = $1`} {
			if _, err := c.w().ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return affected(c.w().ExecContext(ctx, `DELETE FROM sso_connections WHERE id = $1`, id))
	})
}

// BindDomains implements sso.Store: the primary key of sso_domains
// refuses a domain another connection serves.
func (s *SSO) BindDomains(ctx context.Context, id string, domains []string) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `DELETE FROM sso_domains WHERE connection_id = $1`, id); err != nil {
			return err
		}
		for _, d := range domains {
			if err := inserted(c.w().ExecContext(ctx, `INSERT INTO sso_domains (domain, connection_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, d, id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ConnectionForDomain implements sso.Store: only while the connection's
// workspace still has the domain verified.
func (s *SSO) ConnectionForDomain(ctx context.Context, domain string) (*sso.Connection, error) {
	c, err := scanConnection(s.r().QueryRowContext(ctx, `SELECT `+prefixed("c.", ssoColumns)+` FROM sso_domains d
		JOIN sso_connections c ON c.id = d.connection_id JOIN orgs o ON o.id = c.org_id
		JOIN domains v ON v.domain = d.domain AND v.org_id = c.org_id AND v.verified_at IS NOT NULL
		WHERE d.domain = $1 AND o.deleted_at IS NULL`, domain))
	return c, s.one(err)
}

// prefixed puts p before each of a comma-separated column list.
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// EndSessions implements sso.Store: the sessions are revoked (rows in
// revocations, so every instance refuses their access tokens).
func (s *SSO) EndSessions(ctx context.Context, orgID string, domains []string, at time.Time) error {
	for _, d := range domains {
		const which = `FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.revoked_at IS NULL AND s.via <> 'sso' AND u.email_key LIKE $1
			AND s.user_id NOT IN (SELECT m.user_id FROM memberships m WHERE m.org_id = $2 AND m.role = 'owner')`
		args := []any{"%@" + d, orgID}
		err := s.revoke(ctx, revocation.KindSession, at, `SELECT s.id AS subject, '' AS org_id `+which, args, func(c conn) error {
			_, err := c.w().ExecContext(ctx, `UPDATE sessions SET revoked_at = $3 WHERE id IN (SELECT s.id `+which+`)`, "%@"+d, orgID, micros(at))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CreateFlow implements sso.Store; expired flows are pruned on the way.
func (s *SSO) CreateFlow(ctx context.Context, f *sso.Flow) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `DELETE FROM sso_flows WHERE expires_at < $1`, micros(f.ExpiresAt.Add(-sso.FlowTTL))); err != nil {
			return err
		}
		_, err := c.w().ExecContext(ctx, `INSERT INTO sso_flows (state_hash, connection_id, browser_hash, nonce, verifier, next_path, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, f.StateHash, f.ConnectionID, f.BrowserHash, f.Nonce, f.Verifier, f.Next, micros(f.ExpiresAt))
		return c.db.dialect.translate(err)
	})
}

// UseFlow implements sso.Store: the DELETE makes a state single use on
// every instance.
func (s *SSO) UseFlow(ctx context.Context, stateHash string, now time.Time) (*sso.Flow, error) {
	var f sso.Flow
	var exp int64
	// In a transaction: on SQLite a DELETE … RETURNING outside one runs
	// alone at the writer, its own commit and sync (every SSO callback
	// and SAML ACS waited in line for them); in one it shares its commit
	// with the writes queued beside it (txGroups).
	err := s.inTx(ctx, func(c conn) error {
		return c.one(c.w().QueryRowContext(ctx, `DELETE FROM sso_flows WHERE state_hash = $1
			RETURNING state_hash, connection_id, browser_hash, nonce, verifier, next_path, expires_at`, stateHash).
			Scan(&f.StateHash, &f.ConnectionID, &f.BrowserHash, &f.Nonce, &f.Verifier, &f.Next, &exp))
	})
	if err != nil {
		return nil, err
	}
	f.ExpiresAt = fromMicros(exp)
	if !now.Before(f.ExpiresAt) {
		return nil, gatehouse.ErrNotFound
	}
	return &f, nil
}

// LinkedUser implements sso.Store.
func (s *SSO) LinkedUser(ctx context.Context, id, subject string) (string, error) {
	var userID string
	err := s.r().QueryRowContext(ctx, `SELECT user_id FROM sso_links WHERE connection_id = $1 AND subject = $2`, id, subject).Scan(&userID)
	return userID, s.one(err)
}

// Link implements sso.Store.
func (s *SSO) Link(ctx context.Context, id, subject, userID string, at time.Time) error {
	return inserted(s.w().ExecContext(ctx, `INSERT INTO sso_links (connection_id, subject, user_id, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, id, subject, userID, micros(at)))
}

// CreatePendingLink implements sso.Store; expired ones are pruned on the way.
func (s *SSO) CreatePendingLink(ctx context.Context, p *sso.PendingLink) error {
	return s.inTx(ctx, func(c conn) error {
		if _, err := c.w().ExecContext(ctx, `DELETE FROM sso_pending_links WHERE expires_at < $1`, micros(p.ExpiresAt.Add(-sso.LinkTTL))); err != nil {
			return err
		}
		_, err := c.w().ExecContext(ctx, `INSERT INTO sso_pending_links (token_hash, connection_id, subject, user_id, expires_at) VALUES ($1, $2, $3, $4, $5)`,
			p.TokenHash, p.ConnectionID, p.Subject, p.UserID, micros(p.ExpiresAt))
		return c.db.dialect.translate(err)
	})
}

// UsePendingLink implements sso.Store.
func (s *SSO) UsePendingLink(ctx context.Context, tokenHash string, now time.Time) (*sso.PendingLink, error) {
	var p sso.PendingLink
	var exp int64
	err := s.w().QueryRowContext(ctx, `DELETE FROM sso_pending_links WHERE token_hash = $1
		RETURNING token_hash, connection_id, subject, user_id, expires_at`, tokenHash).Scan(&p.TokenHash, &p.ConnectionID, &p.Subject, &p.UserID, &exp)
	if err := s.one(err); err != nil {
		return nil, err
	}
	p.ExpiresAt = fromMicros(exp)
	if !now.Before(p.ExpiresAt) {
		return nil, gatehouse.ErrNotFound
	}
	return &p, nil
}
