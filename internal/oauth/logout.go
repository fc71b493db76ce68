package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/gatehouse/gatehouse"
)

// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): a relying
// party sends the browser to end_session_endpoint (/oauth/logout, a page of
// internal/pages) to sign the person out of Gatehouse, and may name where
// to come back to. ParseLogout checks the request; the page decides whether
// to sign out at once (a valid id_token_hint naming the signed-in person)
// or to ask first, which is the defence against logout CSRF.

// MaxHint bounds an id_token_hint: ID tokens are far shorter.
const MaxHint = 8192

// LogoutRequest is a checked RP-initiated logout request.
type LogoutRequest struct {
	// Client is the relying party the request names (the hint's audience
	// or client_id); nil when it names none.
	Client *Client
	// Subject is the user the id_token_hint names ("" without a hint),
	// SessionID its sid.
	Subject, SessionID string
	// RedirectURI is the registered post_logout_redirect_uri asked for
	// ("" for none), State the state to return with it.
	RedirectURI, State string
}

// Redirect is where to send the browser once signed out: the
// post-logout redirect URI with the state, or "" (the signed-out page).
func (l *LogoutRequest) Redirect() string {
	if l.RedirectURI == "" {
		return ""
	}
	if l.State == "" {
		return l.RedirectURI
	}
	return redirectWith(l.RedirectURI, url.Values{"state": {l.State}})
}

// Params are the request's parameters without the hint, for the
// confirmation form to post back (the client then stands for the hint).
func (l *LogoutRequest) Params() url.Values {
	v := url.Values{}
	if l.Client != nil {
		v.Set("client_id", l.Client.ID)
	}
	if l.RedirectURI != "" {
		v.Set("post_logout_redirect_uri", l.RedirectURI)
	}
	if l.State != "" {
		v.Set("state", l.State)
	}
	return v
}

// ParseLogout checks an RP-initiated logout request: id_token_hint (an ID
// token this issuer signed with a key of the ring, its expiry ignored),
// client_id (which must agree with the hint's audience),
// post_logout_redirect_uri (exactly one of the client's registered
// post_logout_redirect_uris, and only with a client named) and state;
// ui_locales and anything else is ignored. Its error is a *Refusal with
// no RedirectTo, whose message the page shows (a request that cannot be
// trusted is never redirected), or an internal error. ip is the
// requester's, for the client metadata document fetch limits.
func (s *Server) ParseLogout(ctx context.Context, q url.Values, ip string) (*LogoutRequest, error) {
	if !gatehouse.CleanValues(q, 0) {
		return nil, &Refusal{Message: "The sign-out request has parameters that are not valid text."}
	}
	for _, k := range []string{"id_token_hint", "client_id", "post_logout_redirect_uri", "state"} {
		if len(q[k]) > 1 {
			return nil, &Refusal{Message: "The sign-out request repeats the parameter " + k + "."}
		}
		max := MaxParam
		if k == "id_token_hint" {
			max = MaxHint
		}
		if len(q.Get(k)) > max {
			return nil, &Refusal{Message: "The sign-out request's " + k + " is too long."}
		}
	}
	l := &LogoutRequest{RedirectURI: q.Get("post_logout_redirect_uri"), State: q.Get("state")}
	clientID := q.Get("client_id")
	if raw := q.Get("id_token_hint"); raw != "" {
		h, err := s.parseHint(ctx, raw)
		if errors.Is(err, errHint) || err == nil && hintClient(h) == "" {
			return nil, errBadHint
		}
		if err != nil {
			return nil, err
		}
		if clientID != "" && clientID != hintClient(h) {
			return nil, &Refusal{Message: "The sign-out request names two different applications (client_id and the ID token's audience)."}
		}
		clientID, l.Subject, l.SessionID = hintClient(h), h.sub, h.sid
	}
	if clientID != "" {
		c, err := s.Client(ctx, clientID, ip)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Status == http.StatusTooManyRequests {
				return nil, &gatehouse.Error{Kind: gatehouse.KindTooMany, Message: e.Description, RetryAfter: e.RetryAfter}
			}
			if errors.As(err, &e) && e.Status < 500 {
				return nil, &Refusal{Message: "The application that sent you here is not registered with Gatehouse."}
			}
			return nil, err
		}
		l.Client = c
	}
	if l.RedirectURI != "" {
		if l.Client == nil {
			return nil, &Refusal{Message: "The sign-out request asks to return to an address without saying which application it is (client_id or id_token_hint is missing), so Gatehouse will not send you there."}
		}
		if !slices.Contains(l.Client.PostLogoutRedirectURIs, l.RedirectURI) {
			return nil, &Refusal{Message: "The application asked to return to an address it did not register for sign-out, so Gatehouse will not send you there."}
		}
	}
	return l, nil
}

var errBadHint = &Refusal{Message: "The sign-out request carries an ID token that Gatehouse did not issue or that was altered."}

// hintClient is the client an id_token_hint was issued to: its one
// audience, or azp among several; "" when it names none clearly.
func hintClient(h *idTokenHint) string {
	switch {
	case len(h.aud) == 1:
		return h.aud[0]
	case h.azp != "" && slices.Contains(h.aud, h.azp):
		return h.azp
	}
	return ""
}
