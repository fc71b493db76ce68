package pages

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gatehouse/gatehouse/internal/oauth"
)

// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): the
// end_session_endpoint. A relying party sends the browser here (GET, or a
// form POST from its own site) with an id_token_hint, client_id,
// post_logout_redirect_uri and state; oauth.ParseLogout checks them. The
// browser is signed out at once only when a valid id_token_hint names the
// person signed in here; otherwise (no hint, or another person's) a page
// asks first, and its form is the only way to sign out without a hint: it
// carries the pages' cross-origin protection, so another site cannot sign
// a person out (logout CSRF). After signing out the browser returns to the
// registered post_logout_redirect_uri (with state), or sees the
// signed-out page. An unregistered address is never redirected to.

const (
	logoutPath        = "/oauth/logout"
	logoutConfirmPath = "/oauth/logout/confirm"
)

// handleLogout handles "GET /oauth/logout" and "POST /oauth/logout": the
// relying party's request (a POST comes from its site, so it gets no
// cross-origin check; it signs out only as a GET would).
func (h *handlers) handleLogout(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			return logoutRefused("The sign-out request could not be read.")
		}
		q = r.PostForm
	}
	l, err := h.logoutRequest(r, q)
	if err != nil {
		return err
	}
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	if b == nil {
		// Nobody is signed in here: nothing to end, nobody to ask. Only a
		// client an administrator vouched for is returned to at once:
		// anyone may register a client, and Gatehouse must not bounce a
		// browser to its address without the person seeing where
		// (RP-Initiated Logout §3, RFC 9700 §4.11.2); the others get a
		// link naming the host.
		if l.Client != nil && l.Client.RedirectsErrors {
			h.signedOut(w, r, l)
			return nil
		}
		h.signedOutPage(w, r, l)
		return nil
	}
	if l.Subject != "" && l.Subject == b.User.ID {
		return h.endBrowser(w, r, l)
	}
	p := &page{Title: "Sign out?", User: b.User, Action: logoutConfirmPath}
	if l.Client != nil {
		p.ClientName = l.Client.DisplayName()
	}
	if to := l.Redirect(); to != "" {
		p.ClientHost = hostOf(to)
		p.formTarget = formTarget(to) // form-action applies to the redirect after the form
	}
	for k, v := range l.Params() {
		p.Hidden = append(p.Hidden, hidden{k, v[0]})
	}
	sortHidden(p.Hidden)
	h.render(w, r, http.StatusOK, "logout", p)
	return nil
}

// handleLogoutConfirm handles "POST /oauth/logout/confirm", the
// confirmation page's form (same origin only): the request is checked
// again from its fields, then the browser is signed out.
func (h *handlers) handleLogoutConfirm(w http.ResponseWriter, r *http.Request) error {
	q := url.Values{}
	for _, k := range []string{"client_id", "post_logout_redirect_uri", "state"} {
		if v, ok := r.PostForm[k]; ok {
			q[k] = v
		}
	}
	l, err := h.logoutRequest(r, q)
	if err != nil {
		return err
	}
	return h.endBrowser(w, r, l)
}

// logoutRequest checks q; a refused request gets the error page, never a
// redirect.
func (h *handlers) logoutRequest(r *http.Request, q url.Values) (*oauth.LogoutRequest, error) {
	l, err := h.oauth.ParseLogout(r.Context(), q, h.k.ClientIP(r))
	if ref, ok := errors.AsType[*oauth.Refusal](err); ok {
		return nil, logoutRefused(ref.Message)
	}
	return l, err
}

// logoutRefused is a sign-out request refused with msg on the error page.
func logoutRefused(msg string) error {
	return &flowRefusal{Title: "Sign-out refused", Message: msg, signedIn: true}
}

// endBrowser signs the browser out (its session ends, and the clients of
// the grants approved from it are told by back-channel logout), then
// returns it to the relying party or shows the signed-out page.
func (h *handlers) endBrowser(w http.ResponseWriter, r *http.Request, l *oauth.LogoutRequest) error {
	if c, err := r.Cookie(h.sessionCookieName()); err == nil && c.Value != "" {
		if err := h.svc.Logout(r.Context(), c.Value); err != nil {
			return err
		}
	}
	h.setCookie(w, h.sessionCookieName(), "", -1)
	h.signedOut(w, r, l)
	return nil
}

// signedOut sends a signed-out browser to the registered post-logout
// redirect URI, or shows the signed-out page.
func (h *handlers) signedOut(w http.ResponseWriter, r *http.Request, l *oauth.LogoutRequest) {
	if to := l.Redirect(); to != "" {
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	h.signedOutPage(w, r, l)
}

// signedOutPage shows the signed-out page: its button returns to the
// relying party when the request named a registered address, else it
// leads to the sign-in page.
func (h *handlers) signedOutPage(w http.ResponseWriter, r *http.Request, l *oauth.LogoutRequest) {
	p := &page{Title: "Signed out", Message: tr(r, "You are signed out of %s in this browser.", h.brand.Name), Next: "/signin", Button: "Sign in again"}
	if to := l.Redirect(); to != "" {
		p.Next, p.Button = to, tr(r, "Return to %s", hostOf(to))
	}
	h.render(w, r, http.StatusOK, "message", p)
}

// hostOf is the host a URL returns to, for the page to name.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
