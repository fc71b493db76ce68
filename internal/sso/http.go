package sso

import (
	"errors"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/web"
)

// Kernel is what sso needs of the HTTP kernel (internal/web).
type Kernel interface {
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
	Authed(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Full(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	FullIn(param string, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	SessionMeta(r *http.Request) gatehouse.SessionMeta
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
	PerIP(l *ratelimit.Limiter, h func(http.ResponseWriter, *http.Request) error) http.Handler
}

// The per-IP limits of the public endpoints: discovery is a form's
// lookup, a start writes a flow row and a callback calls the provider.
var (
	limitDiscover = [2]int{30, 2} // burst, one more every n seconds
	limitStart    = [2]int{20, 3}
)

// Mount serves /v1/orgs/{id}/sso (owners and admins of a team org; a full
// session to add or delete; its ID-JAG policy at /v1/orgs/{id}/sso/idjag)
// and the sign-in: /v1/sso/discover,
// /v1/sso/start, /v1/sso/callback and /v1/sso/link. A nil svc mounts
// nothing.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	if svc == nil {
		return
	}
	h := &handlers{svc: svc, k: k, secure: web.SecureCookies(svc.base)}
	m.Handle("GET /v1/orgs/{id}/sso", k.Authed(h.handleConnections))
	m.Handle("POST /v1/orgs/{id}/sso", k.FullIn("id", h.handleCreate))
	m.Handle("GET /v1/orgs/{id}/sso/idjag", k.Authed(h.handleIDJAGPolicy))
	m.Handle("PUT /v1/orgs/{id}/sso/idjag", k.FullIn("id", h.handleSetIDJAGPolicy))
	m.Handle("GET /v1/orgs/{id}/sso/{conn_id}", k.Authed(h.handleConnection))
	m.Handle("PATCH /v1/orgs/{id}/sso/{conn_id}", k.Authed(h.handlePatch))
	m.Handle("DELETE /v1/orgs/{id}/sso/{conn_id}", k.FullIn("id", h.handleDelete))
	m.Handle("POST /v1/sso/discover", k.PerIP(k.Limiter("sso_discover", limitDiscover[0], time.Duration(limitDiscover[1])*time.Second), h.handleDiscover))
	start := k.Limiter("sso_start", limitStart[0], time.Duration(limitStart[1])*time.Second)
	m.Handle("GET /v1/sso/start", k.PerIP(start, h.handleStart))
	m.Handle("GET /v1/sso/callback", k.PerIP(start, h.handleCallback))
	m.Handle("POST /v1/sso/link", k.Full(h.handleLink))
	mountSAML(m, k, h)
	h.mountSocial(m, start)
}

type handlers struct {
	svc    *Service
	k      Kernel
	secure bool
}

// connectionJSON is a connection; it never carries the secret.
type connectionJSON struct {
	ID          string      `json:"id"`
	OrgID       string      `json:"org_id"`
	Type        string      `json:"type"`
	Name        string      `json:"name"`
	Issuer      string      `json:"issuer"`
	ClientID    string      `json:"client_id"`
	Scopes      []string    `json:"scopes"`
	DefaultRole string      `json:"default_role"`
	Enforce     bool        `json:"enforce"`
	Domains     []string    `json:"domains"`
	RedirectURI string      `json:"redirect_uri"`
	SAML        *samlJSON   `json:"saml,omitempty"`
	Mapping     mappingJSON `json:"attribute_mapping"`
	CreatedAt   string      `json:"created_at"`
	UpdatedAt   string      `json:"updated_at"`
}

func (h *handlers) toJSON(c *Connection) connectionJSON {
	out := connectionJSON{ID: c.ID, OrgID: c.OrgID, Type: c.protocol(), Name: c.Name, Issuer: c.Issuer, ClientID: c.ClientID, Scopes: c.Scopes,
		DefaultRole: c.DefaultRole, Enforce: c.Enforce, Domains: c.Domains, RedirectURI: h.svc.CallbackURL(),
		CreatedAt: httpjson.Stamp(c.CreatedAt), UpdatedAt: httpjson.Stamp(c.UpdatedAt),
		Mapping: mappingJSON{Name: c.Mapping.Name, Groups: c.Mapping.Groups, GroupTeams: c.Mapping.GroupTeams}}
	if out.Mapping.GroupTeams == nil {
		out.Mapping.GroupTeams = []GroupTeam{}
	}
	if c.SAML != nil {
		out.SAML, out.RedirectURI = h.samlJSON(c), h.svc.SAMLACSURL(c.ID)
	}
	return out
}

func (h *handlers) writeConnection(w http.ResponseWriter, c *Connection) {
	httpjson.Write(w, http.StatusOK, map[string]connectionJSON{"connection": h.toJSON(c)})
}

// body is the body of POST and PATCH /v1/orgs/{id}/sso.
type body struct {
	Type         *string   `json:"type"`
	SAML         *samlBody `json:"saml"`
	Name         *string   `json:"name"`
	Issuer       *string   `json:"issuer"`
	ClientID     *string   `json:"client_id"`
	ClientSecret *string   `json:"client_secret"`
	Scopes       *[]string `json:"scopes"`
	DefaultRole  *string   `json:"default_role"`
	Enforce      *bool     `json:"enforce"`
	Domains      *[]string `json:"domains"`
	// Mapping replaces the attribute mapping; a group maps to a team
	// only (an unknown field, such as a role, is refused).
	Mapping *AttributeMapping `json:"attribute_mapping"`
}

// mappingJSON is a connection's attribute mapping as answered.
type mappingJSON struct {
	Name       string      `json:"name"`
	Groups     string      `json:"groups"`
	GroupTeams []GroupTeam `json:"group_teams"`
}

func (b *body) input() (Input, error) {
	in := Input{Name: b.Name, Issuer: b.Issuer, ClientID: b.ClientID, ClientSecret: b.ClientSecret, Scopes: b.Scopes,
		DefaultRole: b.DefaultRole, Enforce: b.Enforce, Domains: b.Domains, Mapping: b.Mapping}
	return in, b.samlInput(&in)
}

// handleConnections handles "GET /v1/orgs/{id}/sso".
func (h *handlers) handleConnections(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	cs, err := h.svc.Connections(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]connectionJSON, len(cs))
	for i := range cs {
		out[i] = h.toJSON(&cs[i])
	}
	httpjson.Write(w, http.StatusOK, map[string][]connectionJSON{"connections": out})
	return nil
}

// handleCreate handles "POST /v1/orgs/{id}/sso".
func (h *handlers) handleCreate(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in body
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	input, err := in.input()
	if err != nil {
		return err
	}
	c, err := h.svc.CreateConnection(r.Context(), p, r.PathValue("id"), input)
	if err != nil {
		return err
	}
	h.writeConnection(w, c)
	return nil
}

// handleConnection handles "GET /v1/orgs/{id}/sso/{conn_id}".
func (h *handlers) handleConnection(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	c, err := h.svc.Connection(r.Context(), p, r.PathValue("id"), r.PathValue("conn_id"))
	if err != nil {
		return err
	}
	h.writeConnection(w, c)
	return nil
}

// handlePatch handles "PATCH /v1/orgs/{id}/sso/{conn_id}".
func (h *handlers) handlePatch(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in body
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	input, err := in.input()
	if err != nil {
		return err
	}
	c, err := h.svc.UpdateConnection(r.Context(), p, r.PathValue("id"), r.PathValue("conn_id"), input)
	if err != nil {
		return err
	}
	h.writeConnection(w, c)
	return nil
}

// handleDelete handles "DELETE /v1/orgs/{id}/sso/{conn_id}".
func (h *handlers) handleDelete(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteConnection(r.Context(), p, r.PathValue("id"), r.PathValue("conn_id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "SSO connection deleted"})
	return nil
}

// handleDiscover handles "POST /v1/sso/discover".
func (h *handlers) handleDiscover(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email string `json:"email"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, err := h.svc.Discover(r.Context(), in.Email)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"connection_id": d.ConnectionID, "name": d.Name, "start_url": d.StartURL, "enforced": d.Enforced})
	return nil
}

// cookieFlow binds a sign-in under way to the browser that started it.
const cookieFlow = "gatehouse_sso"

func (h *handlers) cookieName(name string) string {
	if h.secure {
		return "__Host-" + name
	}
	return name
}

// handleStart handles "GET /v1/sso/start?connection={id}&next={path}".
func (h *handlers) handleStart(w http.ResponseWriter, r *http.Request) error {
	st, err := h.svc.Start(r.Context(), r.URL.Query().Get("connection"), r.URL.Query().Get("next"))
	if err != nil {
		return err
	}
	h.sendToProvider(w, r, st)
	return nil
}

// sendToProvider binds a started sign-in to the browser and sends it to
// the provider.
func (h *handlers) sendToProvider(w http.ResponseWriter, r *http.Request, st *Started) {
	sameSite := http.SameSiteLaxMode
	if st.CrossSite && h.secure {
		// A SAML response is a cross-site POST: a Lax cookie would stay home.
		sameSite = http.SameSiteNoneMode
	}
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(cookieFlow), Value: st.Browser, Path: "/", MaxAge: int(FlowTTL.Seconds()), HttpOnly: true,
		Secure: h.secure, SameSite: sameSite})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, st.URL, http.StatusFound)
}

// handleCallback handles "GET /v1/sso/callback": on success the browser
// session cookie of the hosted pages is set and the browser sent on; an
// account to link first answers 409 with a link_token.
func (h *handlers) handleCallback(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	browser := ""
	if c, err := r.Cookie(h.cookieName(cookieFlow)); err == nil {
		browser = c.Value
	}
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(cookieFlow), Path: "/", MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	if q.Get("error") != "" {
		return gatehouse.Errorf(gatehouse.KindUnauthorized, "the identity provider refused the sign-in")
	}
	d, err := h.svc.Callback(r.Context(), q.Get("state"), q.Get("code"), browser, q.Get("iss"), h.k.SessionMeta(r))
	return h.finish(w, r, d, err)
}

// finish answers a completed sign-in (OpenID Connect callback or SAML
// ACS): the browser session cookie set and the browser sent on, or a
// link to confirm first (409 with a link_token), or the refusal.
func (h *handlers) finish(w http.ResponseWriter, r *http.Request, d *Done, err error) error {
	var lr *LinkRequired
	if errors.As(err, &lr) {
		h.linkRequired(w, r, lr)
		return nil
	}
	if err != nil {
		return err
	}
	if len(d.SignIn.Factors) > 0 {
		h.toSecondStep(w, r, d)
		return nil
	}
	name := "gatehouse_session"
	if h.secure {
		name = "__Host-gatehouse_session"
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: d.SignIn.RefreshToken, Path: "/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
	return nil
}

// handleLink handles "POST /v1/sso/link".
func (h *handlers) handleLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		LinkToken string `json:"link_token"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.ConfirmLink(r.Context(), p, in.LinkToken); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]bool{"linked": true})
	return nil
}
