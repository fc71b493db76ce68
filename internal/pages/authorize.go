package pages

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// handleAuthorize handles "GET /oauth/authorize": validates the request,
// sends an anonymous browser to sign in, then asks for consent.
func (h *handlers) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	b, err := h.browser(r)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	a, ok := h.authRequest(w, r, r.URL.Query(), b)
	if !ok {
		return
	}
	if b == nil {
		signInFirst(w, r, "oauth")
		return
	}
	h.consent(w, r, b, authorizeConsent(a), "")
}

// handleAuthorizeDecision handles "POST /oauth/authorize": the consent
// form. The request is validated again from the posted fields.
func (h *handlers) handleAuthorizeDecision(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	b, err := h.browser(r)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	a, ok := h.authRequest(w, r, r.PostForm, b)
	if !ok {
		return
	}
	if b == nil {
		q := a.Params()
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/oauth/authorize?" + q.Encode()}, "intro": {"oauth"}}.Encode(), http.StatusSeeOther)
		return
	}
	if r.PostFormValue("decision") != "approve" {
		http.Redirect(w, r, h.oauth.Deny(a), http.StatusSeeOther)
		return
	}
	a.SessionID = b.SessionID
	to, err := h.oauth.Approve(r.Context(), a, b.User.ID, b.Level, r.PostFormValue("org_id"))
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && (e.Kind == gatehouse.KindInvalid || e.Kind == gatehouse.KindForbidden) {
			h.consent(w, r, b, authorizeConsent(a), sentence(e.Message))
			return
		}
		h.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// authRequest parses an authorization request from browser b (nil before
// sign-in); a refusal is answered here (redirect to the client, or the
// error page when the client or its redirect URI cannot be trusted, or the
// user has not signed in yet).
func (h *handlers) authRequest(w http.ResponseWriter, r *http.Request, q url.Values, b *identity.BrowserSession) (*oauth.AuthRequest, bool) {
	a, err := h.oauth.ParseAuthorize(r.Context(), q, oauth.Requester{IP: h.k.ClientIP(r), SignedIn: b != nil})
	var ref *oauth.Refusal
	switch {
	case errors.As(err, &ref) && ref.RedirectTo != "":
		http.Redirect(w, r, ref.RedirectTo, http.StatusSeeOther)
		return nil, false
	case errors.As(err, &ref):
		h.render(w, http.StatusBadRequest, "error", &page{Title: "This sign-in request cannot go on", Message: sentence(ref.Message)})
		return nil, false
	case err != nil:
		h.pageError(w, r, err)
		return nil, false
	}
	return a, true
}

// formTarget is the CSP form-action source of a redirect URI: browsers
// apply form-action to the redirect that follows the consent form.
func formTarget(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + ":"
}
