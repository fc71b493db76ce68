package pages

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "step-expired", Text: "Your sign-in expired before its second step. Sign in again."},
}.add()

// The pending cookie holds the refresh token of a sign-in that owes its
// second factor, for the step page: its 15 minutes, and SameSite=Strict
// since only the pages' own forms lead there. It is never the browser
// session (identity.BrowserUser refuses a pending session). Under https it
// is __Host-gatehouse_mfa, which requires path /; on plain http
// (development) gatehouse_mfa with path /signin.
const (
	cookiePendingInsecure = "gatehouse_mfa"
	stepPath              = "/signin/mfa"
)

// pendingCookieName is the pending cookie's name: __Host- where the
// cookie can be Secure.
func (h *handlers) pendingCookieName() string {
	return h.hostCookie(cookiePendingInsecure)
}

// setPending sets (maxAge > 0) or deletes (maxAge < 0) the pending cookie.
func (h *handlers) setPending(w http.ResponseWriter, value string, maxAge int) {
	path := "/signin"
	if h.secure {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: h.pendingCookieName(), Value: value, Path: path, MaxAge: maxAge, HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteStrictMode})
}

// stepNext keeps a pending sign-in's refresh token in the pending cookie and
// sends the browser to the step page, keeping next.
func (h *handlers) stepNext(w http.ResponseWriter, r *http.Request, refresh, next string) {
	h.keepPending(w, r, refresh)
	http.Redirect(w, r, stepURL(next), http.StatusSeeOther)
}

// keepPending puts a pending sign-in's refresh token in the pending cookie;
// a pending sign-in the browser left before is ended.
func (h *handlers) keepPending(w http.ResponseWriter, r *http.Request, refresh string) {
	if c, err := r.Cookie(h.pendingCookieName()); err == nil && c.Value != "" && c.Value != refresh {
		if err := h.svc.Logout(r.Context(), c.Value); err != nil {
			h.log.Warn("end the browser's previous pending sign-in", "request_id", h.k.RequestID(r), "err", err)
		}
	}
	h.setPending(w, refresh, int(identity.MFAPendingTTL.Seconds()))
}

// stepURL is the step page continuing to next.
func stepURL(next string) string {
	return stepPath + "?" + url.Values{"next": {safeNext(next)}}.Encode()
}

// pending is the principal of the browser's pending sign-in and its
// secret; when there is none (or it expired or was used) the error sends
// the browser back to the sign-in page.
func (h *handlers) pending(w http.ResponseWriter, r *http.Request, next string) (*gatehouse.Principal, string, error) {
	c, err := r.Cookie(h.pendingCookieName())
	secret := ""
	if err == nil {
		secret = c.Value
	}
	p, err := h.svc.PendingPrincipal(r.Context(), secret)
	if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
		h.setPending(w, "", -1)
		return nil, "", sentBack("/signin?" + url.Values{"next": {safeNext(next)}, "done": {"step-expired"}}.Encode())
	}
	if err != nil {
		return nil, "", err
	}
	return p, secret, nil
}

// handleStepPage handles "GET /signin/mfa": the second step of a page
// sign-in (TOTP code, recovery code, passkey).
func (h *handlers) handleStepPage(w http.ResponseWriter, r *http.Request) error {
	next := safeNext(r.URL.Query().Get("next"))
	p, _, err := h.pending(w, r, next)
	if err != nil {
		return err
	}
	h.renderStep(w, r, p, http.StatusOK, next, "")
	return nil
}

// renderStep shows the step page of p with status and msg as its error.
func (h *handlers) renderStep(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, status int, next, msg string) {
	pg := &page{Title: "Two-step verification", Next: next, Error: msg}
	if fs, err := h.svc.StepFactors(r.Context(), p); err != nil {
		h.log.Warn("find factors", "request_id", h.k.RequestID(r), "err", err)
	} else if slices.Contains(fs, identity.FactorPasskey) {
		pg.Script = passkeyScriptPath
	}
	h.render(w, r, status, "mfa", pg)
}

// handleStep handles "POST /signin/mfa": a TOTP code (method totp) or a
// recovery code (method recovery_code). Success replaces the pending
// sign-in with an aal2 browser session; a wrong code shows the page again.
func (h *handlers) handleStep(w http.ResponseWriter, r *http.Request) error {
	next := safeNext(r.PostFormValue("next"))
	p, _, err := h.pending(w, r, next)
	if err != nil {
		return err
	}
	method := r.PostFormValue("method")
	if method != identity.FactorRecoveryCode {
		method = identity.FactorTOTP
	}
	si, err := h.svc.SecondFactor(r.Context(), p, identity.Step{Method: method, Code: r.PostFormValue("code")}, h.k.SessionMeta(r))
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		msg := sentence(e.Message)
		if e.Kind == gatehouse.KindTooMany {
			msg = "Too many attempts. Wait a few minutes and try again."
		}
		h.renderStep(w, r, p, h.k.StatusOf(e.Kind), next, msg)
		return nil
	}
	if err != nil {
		return err
	}
	h.setPending(w, "", -1)
	h.startBrowser(w, r, si.RefreshToken, next)
	return nil
}
