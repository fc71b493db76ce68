package oauth

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/outbound"
	"github.com/gatehouse/gatehouse/internal/token"
)

// Back-Channel Logout 1.0: when a grant session ends, its client is told
// by a logout token POSTed to its backchannel_logout_uri. The stores queue
// a LogoutJob in the transaction that ends the session (sqlstore's revoke:
// every session revocation goes through it), so a rolled-back change sends
// nothing and a committed one is sent even across a crash; the job engine
// (internal/jobs) calls DeliverLogout, with retries.
//
// Which sessions end, and so which clients are told, per event
// (docs/decisions.md):
//   - a grant session revoked (DELETE /v1/me/sessions/{id}, RFC 7009
//     revocation, refresh-token reuse, POST /v1/auth/logout with its
//     refresh token): that session's client;
//   - a grant revoked (DELETE /v1/me/grants/{id}, a code replayed): each
//     live session of the grant;
//   - a password reset or change, account deletion: each live grant
//     session of the user (reset and deletion end them all, a change all
//     but the caller's own);
//   - removal from a workspace (or its deletion): each live grant session
//     of the user (every user's) in that workspace;
//   - a sign-in session signed out (POST /v1/auth/logout, the pages'
//     /signout, RP-initiated logout, revoked in /v1/me/sessions): the
//     grant sessions approved on the consent page from that sign-in
//     session, which stay live (see LogoutJob).
// Only grant sessions are named, so a logout token never tells one client
// about another user's session or about a session of another client.

// LogoutJobKind names back-channel logouts in the job queue.
const LogoutJobKind = "backchannel_logout"

// LogoutAttempts bounds the tries of one logout token; LogoutRetryDelays
// are the waits between them (about two hours from first to last).
const LogoutAttempts = 8

// LogoutRetryDelays are the waits after each failed try (the last repeats).
var LogoutRetryDelays = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour}

// LogoutTimeout bounds one POST of a logout token.
const LogoutTimeout = 5 * time.Second

// LogoutTTL is how long a logout token may be used after it is signed.
const LogoutTTL = 2 * time.Minute

// BackchannelEvent is the member of a logout token's events claim.
const BackchannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// LogoutJob is one logout token to send, the job's arguments: the client
// told, and the ended grant session (the token's sid) of the user (its
// sub). The token itself is signed when it is sent, so a key rotated in
// between does not matter; the client's logout URI and algorithm are read
// then too. Cascade marks a grant session that did not end itself but
// whose approving sign-in session was signed out: the client is told the
// user signed out, its tokens keep working (offline access, Back-Channel
// Logout 1.0 §2.7).
type LogoutJob struct {
	ClientID  string `json:"client_id"`
	Subject   string `json:"sub"`
	SessionID string `json:"sid"`
	Cascade   bool   `json:"cascade,omitempty"`
}

// Kind names back-channel logouts in the job queue.
func (LogoutJob) Kind() string { return LogoutJobKind }

// LogoutSigner is what logout tokens need of the key ring: a signature
// with the explicit type logout+jwt (Back-Channel Logout 1.0 §2.4).
type LogoutSigner interface {
	SignType(ctx context.Context, alg, typ string, payload []byte) (string, error)
}

// logoutClient is the HTTP client of logout deliveries: the outbound
// transport (no private addresses unless allowed), LogoutTimeout, and no
// redirects followed (a 3xx is a failed try).
func logoutClient(allowPrivate bool, roots *x509.CertPool) *http.Client {
	return &http.Client{Timeout: LogoutTimeout, Transport: outbound.Transport(nil, allowPrivate, roots, LogoutTimeout),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// DeliverLogout makes one try of j: the client's current back-channel
// logout URI gets a fresh logout token. A client gone or without a URI
// (any more) is done with nothing sent; any answer but 2xx, or none, is
// an error (the job engine tries again).
func (s *Server) DeliverLogout(ctx context.Context, j LogoutJob) error {
	if s.logoutSigner == nil {
		return errors.New("back-channel logout: no key ring")
	}
	c, err := s.Client(ctx, j.ClientID, "")
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 && e.Status != http.StatusTooManyRequests {
			s.log.Info("back-channel logout: client gone", "client_id", j.ClientID)
			return nil
		}
		return err
	}
	if c.BackchannelLogoutURI == "" {
		return nil
	}
	raw, err := s.LogoutToken(ctx, c, j.Subject, j.SessionID)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BackchannelLogoutURI,
		strings.NewReader(url.Values{"logout_token": {raw}}.Encode()))
	if err != nil {
		return fmt.Errorf("back-channel logout request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.logoutHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("back-channel logout to %s: %w", j.ClientID, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("back-channel logout to %s: status %d", j.ClientID, resp.StatusCode)
	}
	return nil
}

// LogoutToken signs a logout token for client c about session sid of user
// sub: iss, aud (the client), iat, a short exp, a fresh jti, sub, sid and
// the back-channel logout event; never a nonce. It is signed with the
// client's ID token algorithm (RS256 unless registered otherwise).
func (s *Server) LogoutToken(ctx context.Context, c *Client, sub, sid string) (string, error) {
	now := s.clock()
	claims := map[string]any{
		"iss": s.issuer, "aud": c.ID, "iat": now.Unix(), "exp": now.Add(LogoutTTL).Unix(),
		"jti": token.NewSecret(""), "sub": sub, "sid": sid,
		"events": map[string]any{BackchannelEvent: map[string]any{}},
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	alg := c.IDTokenAlg
	if alg == "" {
		alg = keys.RS256
	}
	return s.logoutSigner.SignType(ctx, alg, "logout+jwt", payload)
}
