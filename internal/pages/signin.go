package pages

import (
	"errors"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// handleSignInPage handles "GET /signin".
func (h *handlers) handleSignInPage(w http.ResponseWriter, r *http.Request) error {
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	next := safeNext(q.Get("next"))
	// fresh asks a signed-in browser to sign in again (OpenID Connect
	// prompt=login, max_age, id_token_hint); the new session replaces it.
	if b != nil && q.Get("fresh") == "" {
		// Signed in already: on to where sign-in would have led.
		if next == "/signin" {
			next = "/"
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	email := h.prefill(w, r, "/signin")
	if hint := q.Get("login_hint"); email == "" && hint != "" {
		// OpenID Connect login_hint: prefilled when it is an address.
		if _, _, err := gatehouse.ParseEmail(hint); err == nil {
			email = hint
		}
	}
	intro := introText(q.Get("intro"))
	if b != nil {
		intro = "Sign in again to continue to the application."
	}
	h.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in", Next: next, Email: email, Intro: intro,
		Notice: notices[q.Get("done")], Script: passkeyScriptPath})
	return nil
}

// prefillID names the address that the sign-up page, finding it taken,
// hands on to the sign-in and recovery pages (showOnce).
const prefillID = "email"

// prefill takes the address handed on to the page at path, "" when none.
func (h *handlers) prefill(w http.ResponseWriter, r *http.Request, path string) string {
	if id, email := h.takeShown(w, r, path); id == prefillID {
		return email
	}
	return ""
}

// introText maps the few reasons a page sends the user to sign in.
func introText(key string) string {
	switch key {
	case "oauth":
		return "Sign in to connect an application to your account."
	case "device":
		return "Sign in to connect a device to your account."
	case "invite":
		return "Sign in to accept the invitation."
	case "link":
		return "An account with this address exists. Sign in to it as usual to link the sign-in you used."
	}
	return ""
}

// handleSignIn handles "POST /signin": email and password.
func (h *handlers) handleSignIn(w http.ResponseWriter, r *http.Request) error {
	email, next := r.PostFormValue("email"), safeNext(r.PostFormValue("next"))
	fail := func(status int, msg string) {
		h.render(w, r, status, "signin", &page{Title: "Sign in", Next: next, Email: email, Error: msg, Script: passkeyScriptPath})
	}
	if h.limited(r, h.login) {
		fail(http.StatusTooManyRequests, "Too many attempts. Wait a minute and try again.")
		return nil
	}
	// Home-realm discovery: an address whose domain enforces single
	// sign-on, sent without a password, goes on to its identity provider
	// (by the domain alone: the same for every address there).
	if r.PostFormValue("password") == "" {
		if u, name := h.ssoStart(r, email, next, false); u != "" {
			h.continueSSO(w, r, u, name, next)
			return nil
		}
	}
	si, err := h.svc.Login(r.Context(), email, r.PostFormValue("password"), h.k.SessionMeta(r))
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
			msg := sentence(e.Message)
			if e.Kind == gatehouse.KindTooMany {
				msg = "Too many failed attempts for this account. Wait a minute, or sign in with an email link."
			}
			fail(h.k.StatusOf(e.Kind), msg)
			return nil
		}
		return err
	}
	h.signedIn(w, r, si, next)
	return nil
}

// handleSignInMagic handles "POST /signin/magic": mails a sign-in link and
// remembers in a cookie where to continue once it is opened here.
func (h *handlers) handleSignInMagic(w http.ResponseWriter, r *http.Request) error {
	email, next := r.PostFormValue("email"), safeNext(r.PostFormValue("next"))
	_, display, err := gatehouse.ParseEmail(email)
	if err != nil {
		// Next to the link form's field, not above the password form.
		h.render(w, r, http.StatusBadRequest, "signin", &page{Title: "Sign in", Next: next, Email: email, Script: passkeyScriptPath,
			Fields: map[string]string{"magic-email": sentence(err.(*gatehouse.Error).Message)}})
		return nil
	}
	// The per-IP limit is the API route's; the service keeps the address's.
	if ok, _ := h.magic.Allow(h.k.ClientIP(r)); !ok {
		err = gatehouse.TooMany(0)
	} else {
		err = h.svc.RequestMagicLink(r.Context(), email, "web")
	}
	if refusedByLimit(err) {
		h.render(w, r, http.StatusTooManyRequests, "signin", &page{Title: "Sign in", Next: next, Email: email,
			Error: tooManyLinks, Script: passkeyScriptPath})
		return nil
	} else if err != nil {
		return err
	}
	h.setCookie(w, h.hostCookie(cookieNext), next, int(identity.MagicLinkTTL/time.Second))
	h.render(w, r, http.StatusOK, "message", &page{Title: "Check your email",
		Message: tr(r, "If %s can sign in, a link is on its way. Open it in this browser within 15 minutes to continue.", display),
		Resend:  &resend{Action: "/signin/magic", Hidden: []hidden{{"email", email}, {"next", next}}}})
	return nil
}
