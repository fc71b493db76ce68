package pages

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/sso"
)

// socialButton is a "Continue with …" link of the sign-in and sign-up
// pages: a plain GET of the provider's start, so it needs no script.
type socialButton struct{ Label, URL string }

// socialButtons are the configured social providers' buttons, each
// continuing to next.
func (h *handlers) socialButtons(next string) []socialButton {
	if h.sso == nil {
		return nil
	}
	var out []socialButton
	for _, p := range h.sso.SocialProviders() {
		out = append(out, socialButton{Label: p.Label, URL: sso.SocialStartURL(p.Name, safeNext(next))})
	}
	return out
}

// ssoStart is the start of single sign-on for email when its domain has
// a connection (enforced only, unless anyConn), continuing to next, and
// the connection's name; "" when not. It depends on the domain alone,
// never on an account.
func (h *handlers) ssoStart(r *http.Request, email, next string, anyConn bool) (string, string) {
	if h.sso == nil {
		return "", ""
	}
	d, err := h.sso.Discover(r.Context(), strings.TrimSpace(email))
	if err != nil || (!anyConn && !d.Enforced) {
		return "", ""
	}
	u := "/v1/sso/start?connection=" + d.ConnectionID
	if next = safeNext(next); next != "/" {
		u += "&next=" + url.QueryEscape(next)
	}
	return u, d.Name
}

// continueSSO answers a form whose address signs in through its
// organization: a page with a link to the provider. Not a redirect: the
// page's CSP (form-action 'self') would stop a form's redirect to the
// provider's origin; a link is a navigation of its own.
func (h *handlers) continueSSO(w http.ResponseWriter, r *http.Request, start, name, next string) {
	if name == "" {
		name = "your organization's sign-in"
	}
	h.render(w, r, http.StatusOK, "ssocontinue", &page{Title: "Sign in with single sign-on", Next: next, Action: start, Button: tr(r, "Continue to %s", name),
		Message: "Your organization signs you in with its own identity provider."})
}

// handleSignInSSO handles "POST /signin/sso": home-realm discovery by
// the address alone; an address with no connection is told so, whether
// or not it has an account.
func (h *handlers) handleSignInSSO(w http.ResponseWriter, r *http.Request) {
	email, next := r.PostFormValue("email"), safeNext(r.PostFormValue("next"))
	if h.limited(r, h.login) {
		h.render(w, r, http.StatusTooManyRequests, "signin", &page{Title: "Sign in", Next: next, Email: email,
			Error: "Too many attempts. Wait a minute and try again.", Script: passkeyScriptPath})
		return
	}
	if u, name := h.ssoStart(r, email, next, true); u != "" {
		h.continueSSO(w, r, u, name, next)
		return
	}
	msg := "No single sign-on is set up for this address. Sign in with your password, a passkey or an emailed link."
	if _, _, err := gatehouse.ParseEmail(email); err != nil {
		msg = "Enter your email address to sign in with single sign-on."
	}
	h.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in", Next: next, Email: email, Error: msg, Script: passkeyScriptPath})
}
