package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/gatehouse/gatehouse/internal/oauth"
)

// CreateClient implements oauth.Store.
func (s *OAuth) CreateClient(ctx context.Context, c *oauth.Client) error {
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, metadata, created_at) VALUES ($1, $2, $3, $4, $5)`,
		c.ID, c.Name, string(uris), string(c.Metadata), micros(c.CreatedAt))
	return s.db.dialect.translate(err)
}

// ClientByID implements oauth.Store.
func (s *OAuth) ClientByID(ctx context.Context, id string) (*oauth.Client, error) {
	c := oauth.Client{ID: id}
	var uris, meta string
	var created int64
	err := s.r().QueryRowContext(ctx, `SELECT name, redirect_uris, metadata, created_at FROM oauth_clients WHERE id = $1`, id).
		Scan(&c.Name, &uris, &meta, &created)
	if err != nil {
		return nil, s.one(err)
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, err
	}
	var m struct {
		GrantTypes             []string `json:"grant_types"`
		Scope                  string   `json:"scope"`
		IDTokenAlg             string   `json:"id_token_signed_response_alg"`
		PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris"`
		BackchannelLogoutURI   string   `json:"backchannel_logout_uri"`
	}
	json.Unmarshal([]byte(meta), &m)
	c.GrantTypes, c.Metadata, c.CreatedAt = m.GrantTypes, []byte(meta), fromMicros(created)
	c.Scope, c.IDTokenAlg, c.PostLogoutRedirectURIs, c.BackchannelLogoutURI = m.Scope, m.IDTokenAlg, m.PostLogoutRedirectURIs, m.BackchannelLogoutURI
	return &c, nil
}

const codeColumns = `code_hash, grant_id, client_id, redirect_uri, code_challenge, resource, created_at, expires_at, used_at, nonce`

func scanCode(row interface{ Scan(...any) error }) (*oauth.Code, error) {
	var c oauth.Code
	var created, expires int64
	var used sql.NullInt64
	if err := row.Scan(&c.Hash, &c.GrantID, &c.ClientID, &c.RedirectURI, &c.CodeChallenge, &c.Resource, &created, &expires, &used, &c.Nonce); err != nil {
		return nil, err
	}
	c.CreatedAt, c.ExpiresAt, c.UsedAt = fromMicros(created), fromMicros(expires), fromNullMicros(used)
	return &c, nil
}

// CreateCode implements oauth.Store. Codes expired for a day are removed
// on the way.
func (s *OAuth) CreateCode(ctx context.Context, c *oauth.Code) error {
	if _, err := s.w().ExecContext(ctx, `DELETE FROM oauth_codes WHERE expires_at < $1`, micros(c.CreatedAt.Add(-24*time.Hour))); err != nil {
		return err
	}
	_, err := s.w().ExecContext(ctx, `INSERT INTO oauth_codes (`+codeColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9)`,
		c.Hash, c.GrantID, c.ClientID, c.RedirectURI, c.CodeChallenge, c.Resource, micros(c.CreatedAt), micros(c.ExpiresAt), c.Nonce)
	return s.db.dialect.translate(err)
}

// UseCode implements oauth.Store; the conditional UPDATE makes the code
// single use under concurrency.
func (s *OAuth) UseCode(ctx context.Context, hash string, at time.Time) (*oauth.Code, error) {
	c, err := scanCode(s.w().QueryRowContext(ctx, `UPDATE oauth_codes SET used_at = $2
		WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING `+codeColumns, hash, micros(at)))
	return c, s.one(err)
}

// CodeByHash implements oauth.Store.
func (s *OAuth) CodeByHash(ctx context.Context, hash string) (*oauth.Code, error) {
	c, err := scanCode(s.r().QueryRowContext(ctx, `SELECT `+codeColumns+` FROM oauth_codes WHERE code_hash = $1`, hash))
	return c, s.one(err)
}

const deviceColumns = `device_hash, user_hash, client_id, client_name, scope, resource, interval_s, status, user_id, grant_id, created_at, expires_at, last_poll_at`

func scanDevice(row interface{ Scan(...any) error }) (*oauth.DeviceCode, error) {
	var d oauth.DeviceCode
	var interval int64
	var user, grant sql.NullString
	var created, expires int64
	var polled sql.NullInt64
	if err := row.Scan(&d.DeviceHash, &d.UserHash, &d.ClientID, &d.ClientName, &d.Scope, &d.Resource, &interval, &d.Status,
		&user, &grant, &created, &expires, &polled); err != nil {
		return nil, err
	}
	d.Interval = time.Duration(interval) * time.Second
	d.UserID, d.GrantID = user.String, grant.String
	d.CreatedAt, d.ExpiresAt, d.LastPollAt = fromMicros(created), fromMicros(expires), fromNullMicros(polled)
	return &d, nil
}

// CreateDeviceCode implements oauth.Store. Device codes expired for a day
// are removed on the way, which also frees their user codes.
func (s *OAuth) CreateDeviceCode(ctx context.Context, d *oauth.DeviceCode) error {
	if _, err := s.w().ExecContext(ctx, `DELETE FROM oauth_device_codes WHERE expires_at < $1`, micros(d.CreatedAt.Add(-24*time.Hour))); err != nil {
		return err
	}
	return inserted(s.w().ExecContext(ctx, `INSERT INTO oauth_device_codes (`+deviceColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, NULL, $9, $10, NULL) ON CONFLICT DO NOTHING`,
		d.DeviceHash, d.UserHash, d.ClientID, d.ClientName, d.Scope, d.Resource, int64(d.Interval/time.Second), d.Status,
		micros(d.CreatedAt), micros(d.ExpiresAt)))
}

// DeviceByUserHash implements oauth.Store.
func (s *OAuth) DeviceByUserHash(ctx context.Context, userHash string) (*oauth.DeviceCode, error) {
	d, err := scanDevice(s.r().QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM oauth_device_codes WHERE user_hash = $1`, userHash))
	return d, s.one(err)
}

// DecideDevice implements oauth.Store.
func (s *OAuth) DecideDevice(ctx context.Context, userHash, status, userID, grantID string, at time.Time) error {
	return affected(s.w().ExecContext(ctx, `UPDATE oauth_device_codes SET status = $2, user_id = $3, grant_id = $4
		WHERE user_hash = $1 AND status = 'pending' AND expires_at > $5`, userHash, status, userID, nullString(grantID), micros(at)))
}

// PollDevice implements oauth.Store: a poll at least the interval after the
// last one only records itself; an earlier one also grows the interval by
// 5 s (RFC 8628 §3.5).
func (s *OAuth) PollDevice(ctx context.Context, deviceHash string, at time.Time) (*oauth.DeviceCode, bool, error) {
	d, err := scanDevice(s.w().QueryRowContext(ctx, `UPDATE oauth_device_codes SET last_poll_at = $2
		WHERE device_hash = $1 AND (last_poll_at IS NULL OR last_poll_at + interval_s * CAST(1000000 AS BIGINT) <= $2)
		RETURNING `+deviceColumns, deviceHash, micros(at)))
	if err == nil {
		return d, false, nil
	}
	if err != sql.ErrNoRows {
		return nil, false, err
	}
	d, err = scanDevice(s.w().QueryRowContext(ctx, `UPDATE oauth_device_codes SET last_poll_at = $2, interval_s = interval_s + 5
		WHERE device_hash = $1 RETURNING `+deviceColumns, deviceHash, micros(at)))
	if err != nil {
		return nil, false, s.one(err)
	}
	return d, true, nil
}

// UseDevice implements oauth.Store.
func (s *OAuth) UseDevice(ctx context.Context, deviceHash string) (*oauth.DeviceCode, error) {
	d, err := scanDevice(s.w().QueryRowContext(ctx, `UPDATE oauth_device_codes SET status = 'used'
		WHERE device_hash = $1 AND status = 'approved' RETURNING `+deviceColumns, deviceHash))
	return d, s.one(err)
}

// CreateOIDCGrant implements oauth.Store.
func (s *OAuth) CreateOIDCGrant(ctx context.Context, g *oauth.OIDCGrant) error {
	amr, err := json.Marshal(g.AMR)
	if err != nil {
		return err
	}
	_, err = s.w().ExecContext(ctx, `INSERT INTO oidc_grants (grant_id, auth_time, amr, acr) VALUES ($1, $2, $3, $4)`,
		g.GrantID, micros(g.AuthTime), string(amr), g.ACR)
	return s.db.dialect.translate(err)
}

// OIDCGrant implements oauth.Store.
func (s *OAuth) OIDCGrant(ctx context.Context, grantID string) (*oauth.OIDCGrant, error) {
	g := oauth.OIDCGrant{GrantID: grantID}
	var at int64
	var amr string
	err := s.r().QueryRowContext(ctx, `SELECT auth_time, amr, acr FROM oidc_grants WHERE grant_id = $1`, grantID).Scan(&at, &amr, &g.ACR)
	if err != nil {
		return nil, s.one(err)
	}
	g.AuthTime = fromMicros(at)
	if err := json.Unmarshal([]byte(amr), &g.AMR); err != nil {
		return nil, err
	}
	return &g, nil
}
