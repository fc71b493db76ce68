package workspace

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// mountApplications serves /v1/orgs/{id}/applications: reading and
// editing need an owner or admin of the team org (an admin org key too);
// registering, rotating a secret and deleting need a full sign-in session.
func mountApplications(m *http.ServeMux, k Kernel, h *handlers) {
	m.Handle("GET /v1/orgs/{id}/applications", k.Authed(h.handleApplications))
	m.Handle("POST /v1/orgs/{id}/applications", k.FullIn("id", h.handleCreateApplication))
	m.Handle("GET /v1/orgs/{id}/applications/{app_id}", k.Authed(h.handleApplication))
	m.Handle("PATCH /v1/orgs/{id}/applications/{app_id}", k.Authed(h.handlePatchApplication))
	m.Handle("DELETE /v1/orgs/{id}/applications/{app_id}", k.FullIn("id", h.handleDeleteApplication))
	m.Handle("POST /v1/orgs/{id}/applications/{app_id}/secret", k.FullIn("id", h.handleRotateApplicationSecret))
}

// applicationJSON is an application in RFC 7591's names; it never
// carries a secret.
type applicationJSON struct {
	ID                      string          `json:"id"`
	ClientID                string          `json:"client_id"`
	OrgID                   string          `json:"org_id"`
	ClientName              string          `json:"client_name"`
	RedirectURIs            []string        `json:"redirect_uris"`
	PostLogoutRedirectURIs  []string        `json:"post_logout_redirect_uris"`
	Scope                   string          `json:"scope"`
	TokenEndpointAuthMethod string          `json:"token_endpoint_auth_method"`
	JWKSURI                 string          `json:"jwks_uri,omitempty"`
	JWKS                    json.RawMessage `json:"jwks,omitempty"`
	IDTokenAlg              string          `json:"id_token_signed_response_alg"`
	BackchannelLogoutURI    string          `json:"backchannel_logout_uri,omitempty"`
	FirstParty              bool            `json:"first_party"`
	GrantTypes              []string        `json:"grant_types"`
	ResponseTypes           []string        `json:"response_types"`
	// PreviousSecretExpiresAt is when the secret before the last rotation
	// stops working, while it still works.
	PreviousSecretExpiresAt string `json:"previous_secret_expires_at,omitempty"`
	CreatedAt               string `json:"created_at"`
	UpdatedAt               string `json:"updated_at"`
}

// toApplication is the JSON of a; now decides whether a previous secret
// still works.
func toApplication(a *Application, now time.Time) applicationJSON {
	j := applicationJSON{ID: a.ID, ClientID: a.ClientID(), OrgID: a.OrgID, ClientName: a.ClientName, RedirectURIs: a.RedirectURIs,
		PostLogoutRedirectURIs: a.PostLogoutRedirectURIs, Scope: a.Scope, TokenEndpointAuthMethod: a.AuthMethod, JWKSURI: a.JWKSURI,
		IDTokenAlg: a.IDTokenAlg, BackchannelLogoutURI: a.BackchannelLogoutURI, FirstParty: a.FirstParty,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		CreatedAt: httpjson.Stamp(a.CreatedAt), UpdatedAt: httpjson.Stamp(a.UpdatedAt)}
	if a.JWKS != "" {
		j.JWKS = json.RawMessage(a.JWKS)
	}
	if a.PrevSecretHash != "" && now.Before(a.PrevSecretUntil) {
		j.PreviousSecretExpiresAt = httpjson.Stamp(a.PrevSecretUntil)
	}
	if j.RedirectURIs == nil {
		j.RedirectURIs = []string{}
	}
	if j.PostLogoutRedirectURIs == nil {
		j.PostLogoutRedirectURIs = []string{}
	}
	return j
}

// applicationBody is the body of POST and PATCH.
type applicationBody struct {
	ClientName             *string         `json:"client_name"`
	RedirectURIs           *[]string       `json:"redirect_uris"`
	PostLogoutRedirectURIs *[]string       `json:"post_logout_redirect_uris"`
	Scope                  *string         `json:"scope"`
	AuthMethod             *string         `json:"token_endpoint_auth_method"`
	JWKSURI                *string         `json:"jwks_uri"`
	JWKS                   json.RawMessage `json:"jwks"`
	IDTokenAlg             *string         `json:"id_token_signed_response_alg"`
	BackchannelLogoutURI   *string         `json:"backchannel_logout_uri"`
	FirstParty             *bool           `json:"first_party"`
}

func (b *applicationBody) input() ApplicationInput {
	return ApplicationInput{ClientName: b.ClientName, RedirectURIs: b.RedirectURIs, PostLogoutRedirectURIs: b.PostLogoutRedirectURIs,
		Scope: b.Scope, AuthMethod: b.AuthMethod, JWKSURI: b.JWKSURI, JWKS: b.JWKS, IDTokenAlg: b.IDTokenAlg,
		BackchannelLogoutURI: b.BackchannelLogoutURI, FirstParty: b.FirstParty}
}

func (h *handlers) writeNewApplication(w http.ResponseWriter, na *NewApplication) {
	out := struct {
		Application  applicationJSON `json:"application"`
		ClientSecret string          `json:"client_secret,omitempty"`
	}{toApplication(na.App, h.svc.Now()), na.Secret}
	w.Header().Set("Cache-Control", "no-store")
	httpjson.Write(w, http.StatusOK, out)
}

// handleApplications handles "GET /v1/orgs/{id}/applications".
func (h *handlers) handleApplications(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	as, err := h.svc.Applications(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	now := h.svc.Now()
	out := make([]applicationJSON, len(as))
	for i := range as {
		out[i] = toApplication(&as[i], now)
	}
	httpjson.Write(w, http.StatusOK, map[string][]applicationJSON{"applications": out})
	return nil
}

// handleCreateApplication handles "POST /v1/orgs/{id}/applications".
func (h *handlers) handleCreateApplication(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in applicationBody
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	na, err := h.svc.CreateApplication(r.Context(), p, r.PathValue("id"), in.input())
	if err != nil {
		return err
	}
	h.writeNewApplication(w, na)
	return nil
}

// handleApplication handles "GET /v1/orgs/{id}/applications/{app_id}".
func (h *handlers) handleApplication(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	a, err := h.svc.Application(r.Context(), p, r.PathValue("id"), r.PathValue("app_id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]applicationJSON{"application": toApplication(a, h.svc.Now())})
	return nil
}

// handlePatchApplication handles "PATCH /v1/orgs/{id}/applications/{app_id}".
func (h *handlers) handlePatchApplication(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in applicationBody
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	a, err := h.svc.UpdateApplication(r.Context(), p, r.PathValue("id"), r.PathValue("app_id"), in.input())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]applicationJSON{"application": toApplication(a, h.svc.Now())})
	return nil
}

// handleDeleteApplication handles "DELETE /v1/orgs/{id}/applications/{app_id}".
func (h *handlers) handleDeleteApplication(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteApplication(r.Context(), p, r.PathValue("id"), r.PathValue("app_id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "application deleted"})
	return nil
}

// handleRotateApplicationSecret handles
// "POST /v1/orgs/{id}/applications/{app_id}/secret".
func (h *handlers) handleRotateApplicationSecret(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		GraceSeconds int64 `json:"grace_seconds"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if in.GraceSeconds < 0 || in.GraceSeconds > int64(MaxSecretGrace/time.Second) {
		return gatehouse.InvalidField("grace_seconds", "grace_seconds must be 0 to %d", int(MaxSecretGrace/time.Second))
	}
	na, err := h.svc.RotateApplicationSecret(r.Context(), p, r.PathValue("id"), r.PathValue("app_id"), time.Duration(in.GraceSeconds)*time.Second)
	if err != nil {
		return err
	}
	h.writeNewApplication(w, na)
	return nil
}
