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
	a, err := h.authRequest(r, r.URL.Query(), b)
	if err != nil {
		return err
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
	orgID, err := h.appMember(r, a, b)
	if err != nil {
		return err
	}
	if a.Client.FirstParty {
		// A first-party workspace application skips the consent page; a
		// refusal (the workspace's two-factor policy) shows it with why.
		return h.approve(w, r, a, b, orgID)
	}
	return h.consent(w, r, b, authorizeConsent(a), "")
}

// appMember is the workspace a workspace application's request acts in;
// someone outside it is sent back to the client with access_denied.
func (h *handlers) appMember(r *http.Request, a *oauth.AuthRequest, b *identity.BrowserSession) (string, error) {
	orgID, err := h.oauth.AppMember(r.Context(), a, b.User.ID)
	if ref, ok := errors.AsType[*oauth.Refusal](err); ok {
		return "", sentBack(ref.RedirectTo)
	}
	return orgID, err
}

// approve grants the request in orgID and sends the browser back to the
// client; a refusal the user can act on is shown on the consent page.
func (h *handlers) approve(w http.ResponseWriter, r *http.Request, a *oauth.AuthRequest, b *identity.BrowserSession, orgID string) error {
	a.SessionID = b.SessionID // the grant remembers it, for back-channel logout
	to, err := h.oauth.Approve(r.Context(), a, b.User.ID, b.Level, orgID)
	if err != nil {
		var e *gatehouse.Error
		if !errors.As(err, &e) || (e.Kind != gatehouse.KindInvalid && e.Kind != gatehouse.KindForbidden) {
			return err
		}
		if a.Prompts(oauth.PromptNone) {
			// No page may be shown: the client hears why by redirect.
			return sentBack(h.oauth.InteractionRequired(a, "the request cannot be granted without a page, such as the workspace asking for a second factor"))
		}
		return h.consent(w, r, b, authorizeConsent(a), sentence(e.Message))
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// handleAuthorizeDecision handles "POST /oauth/authorize": the consent
// form. The request is validated again from the posted fields.
func (h *handlers) handleAuthorizeDecision(w http.ResponseWriter, r *http.Request) error {
	r.ParseForm()
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	a, err := h.authRequest(r, r.PostForm, b)
	if err != nil {
		return err
	}
	if b == nil {
		q := a.Params()
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/oauth/authorize?" + q.Encode()}, "intro": {"oauth"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	orgID, err := h.appMember(r, a, b)
	if err != nil {
		return err
	}
	if r.PostFormValue("decision") != "approve" {
		http.Redirect(w, r, h.oauth.Deny(a), http.StatusSeeOther)
		return nil
	}
	if orgID == "" {
		orgID = r.PostFormValue("org_id")
	}
	return h.approve(w, r, a, b, orgID)
}

// authRequest parses an authorization request from browser b (nil before
// sign-in); its refusal goes back to the client when the client may hear
// it (a redirect), else to the error page (the client or its redirect URI
// cannot be trusted, or the user has not signed in yet).
func (h *handlers) authRequest(r *http.Request, q url.Values, b *identity.BrowserSession) (*oauth.AuthRequest, error) {
	who := oauth.Requester{IP: h.k.ClientIP(r), SignedIn: b != nil}
	if b != nil {
		who.UserID, who.AuthTime = b.User.ID, b.AuthTime
	}
	a, err := h.oauth.ParseAuthorize(r.Context(), q, who)
	if ref, ok := errors.AsType[*oauth.Refusal](err); ok {
		return nil, &flowRefusal{to: ref.RedirectTo, Title: "This sign-in request cannot go on", Message: sentence(ref.Message)}
	}
	return a, err
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
