package identity

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Kernel is what the handlers need from the HTTP kernel (internal/web):
// the wrappers that authenticate the caller and write a returned error in
// the API's shape, the named per-IP limiters (shared with the sign-in
// pages by name), and the client address a session records.
type Kernel interface {
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
	Authed(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Full(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	// Pending is Authed that also lets in a session owing its second factor.
	Pending(h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
	PerIP(l *ratelimit.Limiter, h func(http.ResponseWriter, *http.Request) error) http.Handler
	// SessionMeta is what a session records of the request that opens it.
	SessionMeta(r *http.Request) gatehouse.SessionMeta
}

// Mount serves /v1/auth and /v1/me (but for domain discovery, which is
// workspace's) on m. The per-IP limits are the ones docs/decisions.md
// gives; the sign-in pages ask for the same names, so an address has one
// budget for the API and its page.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	h := &handlers{svc: svc, k: k}
	verify := LimitVerify.From(k)
	m.Handle("POST /v1/auth/register", k.PerIP(LimitRegister.From(k), h.handleRegister))
	m.Handle("POST /v1/auth/login", k.PerIP(LimitLogin.From(k), h.handleLogin))
	m.Handle("POST /v1/auth/magic-link", k.PerIP(LimitMagic.From(k), h.handleMagicLink))
	m.Handle("POST /v1/auth/magic-link/verify", k.PerIP(verify, h.handleMagicLinkVerify))
	m.Handle("POST /v1/auth/verify-email", k.PerIP(verify, h.handleVerifyEmail))
	m.Handle("POST /v1/auth/email-change/confirm", k.PerIP(verify, h.handleConfirmEmailChange))
	m.Handle("POST /v1/auth/email-change/undo", k.PerIP(verify, h.handleUndoEmailChange))
	m.Handle("POST /v1/auth/recover", k.PerIP(LimitRecover.From(k), h.handleRecover))
	m.Handle("POST /v1/auth/recover/verify", k.PerIP(verify, h.handleRecoverVerify))
	m.Handle("POST /v1/auth/recover/passkey", k.PerIP(verify, h.handleRecoverPasskey))
	m.Handle("POST /v1/auth/refresh", k.Public(h.handleRefresh))
	m.Handle("POST /v1/auth/logout", k.Public(h.handleLogout))
	m.Handle("POST /v1/auth/switch-org", k.Authed(h.handleSwitchOrg))
	m.Handle("GET /v1/auth/me", k.Pending(h.handleMe))
	m.Handle("GET /v1/auth/verify", k.Pending(h.handleVerify))
	m.Handle("POST /v1/auth/mfa", k.Pending(h.handleSecondFactor))
	m.Handle("POST /v1/auth/mfa/passkey", k.Pending(h.handlePasskeyStepBegin))
	m.Handle("POST /v1/auth/token", k.PerIP(LimitKeyExchange.From(k), h.handleKeyExchange))

	m.Handle("PATCH /v1/me", k.Authed(h.handlePatchMe))
	m.Handle("DELETE /v1/me", k.Full(h.handleDeleteMe))
	m.Handle("POST /v1/me/password", k.Full(h.handlePassword))
	m.Handle("POST /v1/me/verify-email/resend", k.Full(h.handleResend))
	m.Handle("POST /v1/me/email", k.Full(h.handleChangeEmail))
	m.Handle("GET /v1/me/orgs", k.Authed(h.handleMyOrgs))
	m.Handle("GET /v1/me/sessions", k.Full(h.handleSessions))
	m.Handle("DELETE /v1/me/sessions/{sid}", k.Full(h.handleDeleteSession))
	m.Handle("GET /v1/me/grants", k.Full(h.handleGrants))
	m.Handle("DELETE /v1/me/grants/{gid}", k.Full(h.handleDeleteGrant))
	m.Handle("GET /v1/me/api-keys", k.Full(h.handleUserKeys))
	m.Handle("POST /v1/me/api-keys", k.Full(h.handleCreateUserKey))
	m.Handle("DELETE /v1/me/api-keys/{kid}", k.Full(h.handleDeleteUserKey))
	mountPasskeys(m, k, h)
	m.Handle("GET /v1/me/factors", k.Full(h.handleFactors))
	m.Handle("POST /v1/me/factors/totp", k.Full(h.handleEnrolTOTP))
	m.Handle("POST /v1/me/factors/{fid}/confirm", k.Full(h.handleConfirmFactor))
	m.Handle("DELETE /v1/me/factors/{fid}", k.Full(h.handleDeleteFactor))
	m.Handle("POST /v1/me/recovery-codes", k.Full(h.handleRecoveryCodes))
}

// handlers are the module's HTTP handlers; each decodes, calls one method
// of svc and writes the answer.
type handlers struct {
	svc *Service
	k   Kernel
}

// handleRegister handles "POST /v1/auth/register".
func (h *handlers) handleRegister(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
		Name     string `json:"name"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	si, err := h.svc.Register(r.Context(), RegisterInput{Email: in.Email, Password: in.Password, Name: in.Name}, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleLogin handles "POST /v1/auth/login". Besides the per-IP limit, a
// locked account's guesses are bounded (the domain's lockout).
func (h *handlers) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	si, err := h.svc.Login(r.Context(), in.Email, in.Password, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleMagicLink handles "POST /v1/auth/magic-link": besides the per-IP
// limit, the service bounds the links asked for one address.
func (h *handlers) handleMagicLink(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email  string `json:"email"`
		Client string `json:"client"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.RequestMagicLink(r.Context(), in.Email, in.Client); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "if the address can sign in, a link is on its way"})
	return nil
}

// handleMagicLinkVerify handles "POST /v1/auth/magic-link/verify".
func (h *handlers) handleMagicLinkVerify(w http.ResponseWriter, r *http.Request) error {
	var in tokenInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	si, err := h.svc.VerifyMagicLink(r.Context(), in.Token, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleVerifyEmail handles "POST /v1/auth/verify-email".
func (h *handlers) handleVerifyEmail(w http.ResponseWriter, r *http.Request) error {
	var in tokenInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	u, err := h.svc.VerifyEmail(r.Context(), in.Token)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Message string   `json:"message"`
		User    userJSON `json:"user"`
	}{"email verified", toUser(u)})
	return nil
}

// handleRefresh handles "POST /v1/auth/refresh".
func (h *handlers) handleRefresh(w http.ResponseWriter, r *http.Request) error {
	var in refreshInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	si, err := h.svc.Refresh(r.Context(), in.RefreshToken, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleLogout handles "POST /v1/auth/logout": 200 whatever it is sent; a
// body that does not hold a refresh token signs nothing out.
func (h *handlers) handleLogout(w http.ResponseWriter, r *http.Request) error {
	var in refreshInput
	if err := httpjson.Decode(r, &in); err != nil {
		in.RefreshToken = ""
	}
	if err := h.svc.Logout(r.Context(), in.RefreshToken); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "signed out"})
	return nil
}

// handleSwitchOrg handles "POST /v1/auth/switch-org".
func (h *handlers) handleSwitchOrg(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		OrgID string `json:"org_id"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	t, err := h.svc.SwitchOrg(r.Context(), p, in.OrgID)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, workspace.ToOrgToken(t))
	return nil
}

// handleMe handles "GET /v1/auth/me".
func (h *handlers) handleMe(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	u, oc, err := h.svc.Me(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		User userJSON                 `json:"user"`
		Org  workspace.OrgContextJSON `json:"org"`
	}{toUser(u), workspace.ToOrgContext(oc)})
	return nil
}

// handleVerify handles "GET /v1/auth/verify". A token owing its second
// factor is not a sign-in: 401, so that a service checking tokens here
// never takes it for one.
func (h *handlers) handleVerify(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if p.Pending {
		return errPendingToken
	}
	u, err := h.svc.VerifyUser(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Valid   bool   `json:"valid"`
		UserID  string `json:"user_id"`
		Email   string `json:"email"`
		Name    string `json:"name"`
		OrgID   string `json:"org_id"`
		OrgRole string `json:"org_role"`
	}{true, u.ID, u.Email, u.Name, p.OrgID, p.Role})
	return nil
}

var errPendingToken = gatehouse.Errorf(gatehouse.KindUnauthorized, "this token owes its second factor and is not a sign-in")

// handleKeyExchange handles "POST /v1/auth/token": an API key for a short
// access token.
func (h *handlers) handleKeyExchange(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		APIKey string `json:"api_key"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	t, err := h.svc.ExchangeKey(r.Context(), in.APIKey)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, workspace.ToOrgToken(t))
	return nil
}
