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
// sends an anonymous browser to sign in (and a signed-in one to sign in
// again when prompt, max_age or id_token_hint ask for it), then asks for
// consent.
func (h *handlers) handleAuthorize(w http.ResponseWriter, r *http.Request) error {
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	a, ok := h.authRequest(w, r, r.URL.Query(), b)
	if !ok {
		return nil
	}
	if b == nil || a.Reauthenticate {
		// Back to the request without what asked for this sign-in
		// (AuthRequest.Params), so it is not asked for again.
		q := url.Values{"next": {"/oauth/authorize?" + a.Params().Encode()}, "intro": {"oauth"}}
		if a.Reauthenticate {
			q.Set("fresh", "1")
		}
		if a.LoginHint != "" {
			q.Set("login_hint", a.LoginHint)
		}
		http.Redirect(w, r, "/signin?"+q.Encode(), http.StatusSeeOther)
		return nil
	}
	orgID, ok := h.appMember(w, r, a, b)
	if !ok {
		return nil
	}
	if a.Client.FirstParty {
		// A first-party workspace application skips the consent page; a
		// refusal (the workspace's two-factor policy) shows it with why.
		h.approve(w, r, a, b, orgID)
		return nil
	}
	h.consent(w, r, b, authorizeConsent(a), "")
	return nil
}

// appMember answers a workspace application's request by someone outside
// its workspace with access_denied by redirect (ok false).
func (h *handlers) appMember(w http.ResponseWriter, r *http.Request, a *oauth.AuthRequest, b *identity.BrowserSession) (string, bool) {
	orgID, err := h.oauth.AppMember(r.Context(), a, b.User.ID)
	var ref *oauth.Refusal
	switch {
	case errors.As(err, &ref):
		http.Redirect(w, r, ref.RedirectTo, http.StatusSeeOther)
		return "", false
	case err != nil:
		h.pageError(w, r, err)
		return "", false
	}
	return orgID, true
}

// approve grants the request in orgID and sends the browser back to the
// client; a refusal the user can act on is shown on the consent page.
func (h *handlers) approve(w http.ResponseWriter, r *http.Request, a *oauth.AuthRequest, b *identity.BrowserSession, orgID string) {
	a.SessionID = b.SessionID // the grant remembers it, for back-channel logout
	to, err := h.oauth.Approve(r.Context(), a, b.User.ID, b.Level, orgID)
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && (e.Kind == gatehouse.KindInvalid || e.Kind == gatehouse.KindForbidden) {
			if a.Prompts(oauth.PromptNone) {
				// No page may be shown: the client hears why by redirect.
				http.Redirect(w, r, h.oauth.InteractionRequired(a, "the request cannot be granted without a page, such as the workspace asking for a second factor"), http.StatusSeeOther)
				return
			}
			h.consent(w, r, b, authorizeConsent(a), sentence(e.Message))
			return
		}
		h.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// handleAuthorizeDecision handles "POST /oauth/authorize": the consent
// form. The request is validated again from the posted fields.
func (h *handlers) handleAuthorizeDecision(w http.ResponseWriter, r *http.Request) error {
	r.ParseForm()
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	a, ok := h.authRequest(w, r, r.PostForm, b)
	if !ok {
		return nil
	}
	if b == nil {
		q := a.Params()
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/oauth/authorize?" + q.Encode()}, "intro": {"oauth"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	orgID, ok := h.appMember(w, r, a, b)
	if !ok {
		return nil
	}
	if r.PostFormValue("decision") != "approve" {
		http.Redirect(w, r, h.oauth.Deny(a), http.StatusSeeOther)
		return nil
	}
	if orgID == "" {
		orgID = r.PostFormValue("org_id")
	}
	h.approve(w, r, a, b, orgID)
	return nil
}

// authRequest parses an authorization request from browser b (nil before
// sign-in); a refusal is answered here (redirect to the client, or the
// error page when the client or its redirect URI cannot be trusted, or the
// user has not signed in yet).
func (h *handlers) authRequest(w http.ResponseWriter, r *http.Request, q url.Values, b *identity.BrowserSession) (*oauth.AuthRequest, bool) {
	who := oauth.Requester{IP: h.k.ClientIP(r), SignedIn: b != nil}
	if b != nil {
		who.UserID, who.AuthTime = b.User.ID, b.AuthTime
	}
	a, err := h.oauth.ParseAuthorize(r.Context(), q, who)
	var ref *oauth.Refusal
	switch {
	case errors.As(err, &ref) && ref.RedirectTo != "":
		http.Redirect(w, r, ref.RedirectTo, http.StatusSeeOther)
		return nil, false
	case errors.As(err, &ref):
		h.render(w, r, http.StatusBadRequest, "error", &page{Title: "This sign-in request cannot go on", Message: sentence(ref.Message)})
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
