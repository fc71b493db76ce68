package pages

import (
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The browser session is a cookie holding the refresh token of a sign-in
// session, resolved without rotating it; the database keeps only its hash.
const (
	cookieSecure   = "__Host-gatehouse_session"
	cookieInsecure = "gatehouse_session"
	cookieNext     = "gatehouse_next"
)

// sessionCookieName is the session cookie's name: __Host- only where
// the cookie can be Secure.
func (h *handlers) sessionCookieName() string {
	if h.secure {
		return cookieSecure
	}
	return cookieInsecure
}

// hostCookie is name with the __Host- prefix where cookies are Secure: a
// browser then takes it only from this host over https, with path / and
// no Domain, so neither a sibling subdomain nor a plain-http answer can
// plant or overwrite it. Plain http (development) keeps name.
func (h *handlers) hostCookie(name string) string {
	if h.secure {
		return "__Host-" + name
	}
	return name
}

// setCookie sets (maxAge 0: for the browser session) or, with a negative
// maxAge, deletes a cookie of the pages.
func (h *handlers) setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteLaxMode})
}

// browser returns the signed-in user of the hosted pages, or nil.
func (h *handlers) browser(r *http.Request) (*identity.BrowserSession, error) {
	c, err := r.Cookie(h.sessionCookieName())
	if err != nil || c.Value == "" {
		return nil, nil
	}
	b, err := h.svc.BrowserUser(r.Context(), c.Value)
	if gatehouse.ErrorKind(err) == gatehouse.KindUnauthorized {
		return nil, nil
	}
	if b != nil {
		i18n.Prefer(r.Context(), b.User.Language)
	}
	return b, err
}

// signedIn starts the browser session of a fresh sign-in and sends the
// browser on to next. Signing in again in the same browser ends the
// browser's previous session. A sign-in that owes its second factor never
// becomes the browser session (identity.BrowserUser refuses one): its
// token waits in the pending cookie for the step page (signin_mfa.go).
func (h *handlers) signedIn(w http.ResponseWriter, r *http.Request, si *identity.SignIn, next string) {
	if len(si.Factors) > 0 {
		h.stepNext(w, r, si.RefreshToken, next)
		return
	}
	h.startBrowser(w, r, si.RefreshToken, next)
}

// startBrowser makes refresh the browser session, ending the browser's
// previous one, and sends the browser on to next.
func (h *handlers) startBrowser(w http.ResponseWriter, r *http.Request, refresh, next string) {
	h.endPrevious(r, refresh)
	h.setCookie(w, h.sessionCookieName(), refresh, 0)
	h.setCookie(w, h.hostCookie(cookieNext), "", -1)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// endPrevious ends the browser's session when a sign-in replaces it with
// refresh's.
func (h *handlers) endPrevious(r *http.Request, refresh string) {
	if c, err := r.Cookie(h.sessionCookieName()); err == nil && c.Value != "" && c.Value != refresh {
		if err := h.svc.Logout(r.Context(), c.Value); err != nil {
			h.log.Warn("end the browser's previous session", "request_id", h.k.RequestID(r), "err", err)
		}
	}
}

// safeNext is the one check of a return path (the sign-in page's next, the
// magic-link cookie): a parsed path with no scheme or host, no control
// characters (browsers drop tabs and newlines, so "/\t/evil" is "//evil")
// and no backslashes (read as slashes), encoded or not. Anything else lands
// on the console home.
func safeNext(next string) string {
	const landing = "/"
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(u.Path, "//") {
		return landing
	}
	for _, s := range []string{next, u.Path} {
		if strings.ContainsRune(s, '\\') || strings.ContainsFunc(s, unicode.IsControl) {
			return landing
		}
	}
	return next
}

// signInFirst sends an anonymous browser to the sign-in page, returning to
// the current URL.
func signInFirst(w http.ResponseWriter, r *http.Request, intro string) {
	q := url.Values{"next": {r.URL.RequestURI()}}
	if intro != "" {
		q.Set("intro", intro)
	}
	http.Redirect(w, r, "/signin?"+q.Encode(), http.StatusSeeOther)
}
