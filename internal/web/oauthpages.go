package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// handleAuthorize handles "GET /oauth/authorize": validates the request,
// sends an anonymous browser to sign in, then asks for consent.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	a, ok := s.authRequest(w, r, r.URL.Query(), b)
	if !ok {
		return
	}
	if b == nil {
		signInFirst(w, r, "oauth")
		return
	}
	s.consent(w, r, b, "Connect "+a.Client.DisplayName(), a.Client, "/oauth/authorize", a.Params(), formTarget(a.RedirectURI), "")
}

// handleAuthorizeDecision handles "POST /oauth/authorize": the consent
// form. The request is validated again from the posted fields.
func (s *Server) handleAuthorizeDecision(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	a, ok := s.authRequest(w, r, r.PostForm, b)
	if !ok {
		return
	}
	if b == nil {
		q := a.Params()
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/oauth/authorize?" + q.Encode()}, "intro": {"oauth"}}.Encode(), http.StatusSeeOther)
		return
	}
	if r.PostFormValue("decision") != "approve" {
		http.Redirect(w, r, s.oauth.Deny(a), http.StatusSeeOther)
		return
	}
	to, err := s.oauth.Approve(r.Context(), a, b.User.ID, r.PostFormValue("org_id"))
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && (e.Kind == gatehouse.KindInvalid || e.Kind == gatehouse.KindForbidden) {
			s.consent(w, r, b, "Connect "+a.Client.DisplayName(), a.Client, "/oauth/authorize", a.Params(), formTarget(a.RedirectURI), sentence(e.Message))
			return
		}
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// authRequest parses an authorization request from browser b (nil before
// sign-in); a refusal is answered here (redirect to the client, or the
// error page when the client or its redirect URI cannot be trusted, or the
// user has not signed in yet).
func (s *Server) authRequest(w http.ResponseWriter, r *http.Request, q url.Values, b *accounts.BrowserSession) (*oauth.AuthRequest, bool) {
	a, err := s.oauth.ParseAuthorize(r.Context(), q, oauth.Requester{IP: clientIP(r), SignedIn: b != nil})
	var ref *oauth.Refusal
	switch {
	case errors.As(err, &ref) && ref.RedirectTo != "":
		http.Redirect(w, r, ref.RedirectTo, http.StatusSeeOther)
		return nil, false
	case errors.As(err, &ref):
		s.render(w, http.StatusBadRequest, "error", &page{Title: "This sign-in request cannot go on", Message: sentence(ref.Message)})
		return nil, false
	case err != nil:
		s.pageError(w, r, err)
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

// consent renders the consent page: the client, and the user's workspaces
// to pick one from (the default one preselected).
func (s *Server) consent(w http.ResponseWriter, r *http.Request, b *accounts.BrowserSession, title string, c *oauth.Client,
	action string, params url.Values, target, problem string) {
	orgs, def, err := s.svc.UserWorkspaces(r.Context(), b.User.ID)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := &page{Title: title, User: b.User, ClientName: c.DisplayName(), Action: action, formTarget: target, Error: problem}
	if strings.Contains(c.ID, "://") {
		if u, err := url.Parse(c.ID); err == nil {
			p.ClientName += " from " + u.Host
		}
	}
	if u, err := url.Parse(params.Get("redirect_uri")); err == nil && u.Host != "" {
		p.ClientHost = u.Host
	}
	for k, v := range params {
		p.Hidden = append(p.Hidden, hidden{k, v[0]})
	}
	sortHidden(p.Hidden)
	for _, o := range orgs {
		p.Orgs = append(p.Orgs, orgChoice{ID: o.ID, Name: o.Name, Kind: o.Kind, Role: o.Role, Checked: o.ID == def})
	}
	status := http.StatusOK
	if problem != "" {
		status = http.StatusBadRequest
	}
	s.render(w, status, "consent", p)
}

func sortHidden(h []hidden) {
	for i := 1; i < len(h); i++ {
		for j := i; j > 0 && h[j].Name < h[j-1].Name; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
}

// handleDevicePage handles "GET /device": the signed-in user types the
// code shown on the device (or follows verification_uri_complete), then
// sees the client and picks the workspace.
func (s *Server) handleDevicePage(w http.ResponseWriter, r *http.Request) {
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if b == nil {
		signInFirst(w, r, "device")
		return
	}
	code := r.URL.Query().Get("user_code")
	if code == "" {
		s.render(w, http.StatusOK, "device", &page{Title: "Connect a device", User: b.User})
		return
	}
	if s.deviceCodesLimited(w, r, b) {
		return
	}
	d, err := s.oauth.LookupDevice(r.Context(), code)
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Kind == gatehouse.KindNotFound {
			s.deviceCodeFailed(r, b)
			s.render(w, http.StatusNotFound, "device", &page{Title: "Connect a device", User: b.User, Code: code, Error: sentence(e.Message)})
			return
		}
		s.pageError(w, r, err)
		return
	}
	s.deviceConsent(w, r, b, d, "")
}

func (s *Server) deviceConsent(w http.ResponseWriter, r *http.Request, b *accounts.BrowserSession, d *oauth.PendingDevice, problem string) {
	c := &oauth.Client{ID: d.ClientID, Name: d.ClientName}
	s.consent(w, r, b, "Connect "+c.DisplayName(), c, "/device", url.Values{"user_code": {d.UserCode}}, "", problem)
}

// handleDeviceDecision handles "POST /device": approve (with the chosen
// workspace) or deny a device authorization.
func (s *Server) handleDeviceDecision(w http.ResponseWriter, r *http.Request) {
	b, err := s.browser(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	code := r.PostFormValue("user_code")
	if b == nil {
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/device?user_code=" + url.QueryEscape(code)}, "intro": {"device"}}.Encode(), http.StatusSeeOther)
		return
	}
	if s.deviceCodesLimited(w, r, b) {
		return
	}
	approve := r.PostFormValue("decision") == "approve"
	err = s.oauth.DecideDevice(r.Context(), code, b.User.ID, r.PostFormValue("org_id"), approve)
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && (e.Kind == gatehouse.KindInvalid || e.Kind == gatehouse.KindForbidden) {
			if d, lerr := s.oauth.LookupDevice(r.Context(), code); lerr == nil {
				s.deviceConsent(w, r, b, d, sentence(e.Message))
				return
			}
		}
		if errors.As(err, &e) && e.Kind == gatehouse.KindNotFound {
			s.deviceCodeFailed(r, b)
			s.render(w, http.StatusNotFound, "device", &page{Title: "Connect a device", User: b.User, Code: code, Error: sentence(e.Message)})
			return
		}
		s.pageError(w, r, err)
		return
	}
	if !approve {
		s.render(w, http.StatusOK, "message", &page{Title: "Request denied", Message: "The device was not connected. You can close this page."})
		return
	}
	s.render(w, http.StatusOK, "message", &page{Title: "Device connected", Message: "You can return to your device; it will finish signing in by itself."})
}

// deviceCodesLimited answers 429 (the error page, with Retry-After) when
// the IP or browser session of b has typed too many wrong user codes
// (RFC 8628 §5.1).
func (s *Server) deviceCodesLimited(w http.ResponseWriter, r *http.Request, b *accounts.BrowserSession) bool {
	if s.limits == nil {
		return false
	}
	for _, key := range []string{"ip " + clientIP(r), "session " + b.SessionID} {
		if ok, wait := s.limits.failedDeviceCodes.Check(key); !ok {
			s.pageError(w, r, gatehouse.TooMany(wait))
			return true
		}
	}
	return false
}

// deviceCodeFailed counts a wrong user code against the IP and the session.
func (s *Server) deviceCodeFailed(r *http.Request, b *accounts.BrowserSession) {
	if s.limits != nil {
		s.limits.failedDeviceCodes.Allow("ip " + clientIP(r))
		s.limits.failedDeviceCodes.Allow("session " + b.SessionID)
	}
}
