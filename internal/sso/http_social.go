package sso

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// mountSocial serves social sign-in (/v1/sso/providers,
// /v1/sso/social/{provider}/start; the callback is the connections') and
// the caller's linked identities (/v1/me/identities).
func (h *handlers) mountSocial(m *http.ServeMux, start *ratelimit.Limiter) {
	m.Handle("GET /v1/sso/providers", h.k.Public(h.handleProviders))
	m.Handle("GET /v1/sso/social/{provider}/start", h.k.PerIP(start, h.handleSocialStart))
	m.Handle("GET /v1/me/identities", h.k.Full(h.handleIdentities))
	m.Handle("DELETE /v1/me/identities/{iid}", h.k.Full(h.handleUnlink))
}

// handleProviders handles "GET /v1/sso/providers".
func (h *handlers) handleProviders(w http.ResponseWriter, r *http.Request) error {
	out := []map[string]string{}
	for _, p := range h.svc.SocialProviders() {
		out = append(out, map[string]string{"name": p.Name, "label": p.Label, "start_url": h.svc.base + SocialStartURL(p.Name, "")})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"providers": out})
	return nil
}

// handleSocialStart handles "GET /v1/sso/social/{provider}/start?next={path}".
func (h *handlers) handleSocialStart(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.StartSocial(r.Context(), r.PathValue("provider"), r.URL.Query().Get("next"))
	if err != nil {
		return err
	}
	h.sendToProvider(w, r, st)
	return nil
}

// identityJSON is a linked identity; never its subject.
type identityJSON struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Provider  string `json:"provider"`
	Name      string `json:"name"`
	Email     string `json:"email,omitempty"`
	CreatedAt string `json:"created_at"`
}

// handleIdentities handles "GET /v1/me/identities".
func (h *handlers) handleIdentities(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	is, err := h.svc.Identities(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]identityJSON, len(is))
	for i, l := range is {
		out[i] = identityJSON{ID: l.ID, Type: l.Kind, Provider: l.Provider, Name: l.Label, Email: l.Email, CreatedAt: httpjson.Stamp(l.CreatedAt)}
	}
	httpjson.Write(w, http.StatusOK, map[string][]identityJSON{"identities": out})
	return nil
}

// handleUnlink handles "DELETE /v1/me/identities/{iid}".
func (h *handlers) handleUnlink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.Unlink(r.Context(), p, r.PathValue("iid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "identity unlinked"})
	return nil
}
