package pages

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// handleDevicePage handles "GET /device": the signed-in user types the
// code shown on the device (or follows verification_uri_complete), then
// sees the client and picks the workspace.
func (h *handlers) handleDevicePage(w http.ResponseWriter, r *http.Request) error {
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	if b == nil {
		signInFirst(w, r, "device")
		return nil
	}
	code := r.URL.Query().Get("user_code")
	if code == "" {
		h.render(w, r, http.StatusOK, "device", &page{Title: "Connect a device", User: b.User})
		return nil
	}
	if err := h.deviceCodesLimited(r, b); err != nil {
		return err
	}
	d, err := h.oauth.LookupDevice(r.Context(), code)
	if err != nil {
		return h.wrongDeviceCode(r, b, code, err)
	}
	return h.deviceConsent(w, r, b, d, "")
}

// deviceConsent renders the consent page for the pending device d.
func (h *handlers) deviceConsent(w http.ResponseWriter, r *http.Request, b *identity.BrowserSession, d *oauth.PendingDevice, problem string) error {
	c := &oauth.Client{ID: d.ClientID, Name: d.ClientName}
	return h.consent(w, r, b, consentRequest{title: "Connect " + c.DisplayName(), client: c, action: "/device",
		params: url.Values{"user_code": {d.UserCode}}, userCode: d.UserCode, scope: d.Scope, resource: d.Resource}, problem)
}

// handleDeviceDecision handles "POST /device": approve (with the chosen
// workspace) or deny a device authorization.
func (h *handlers) handleDeviceDecision(w http.ResponseWriter, r *http.Request) error {
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	code := r.PostFormValue("user_code")
	if b == nil {
		http.Redirect(w, r, "/signin?"+url.Values{"next": {"/device?user_code=" + url.QueryEscape(code)}, "intro": {"device"}}.Encode(), http.StatusSeeOther)
		return nil
	}
	if err := h.deviceCodesLimited(r, b); err != nil {
		return err
	}
	approve := r.PostFormValue("decision") == "approve"
	err = h.oauth.DecideDevice(r.Context(), code, b.User.ID, b.Level, b.AuthTime, r.PostFormValue("org_id"), approve)
	if err != nil {
		var e *gatehouse.Error
		if errors.As(err, &e) && (e.Kind == gatehouse.KindInvalid || e.Kind == gatehouse.KindForbidden) {
			if d, lerr := h.oauth.LookupDevice(r.Context(), code); lerr == nil {
				return h.deviceConsent(w, r, b, d, sentence(e.Message))
			}
		}
		return h.wrongDeviceCode(r, b, code, err)
	}
	// The outcome is a signed-in page: it offers sign-out (the layout's)
	// and a way on into the console.
	if !approve {
		h.render(w, r, http.StatusOK, "message", &page{Title: "Request denied", User: b.User,
			Message: "The device was not connected. You can close this page.", Next: "/", Button: "Go to your console"})
		return nil
	}
	h.render(w, r, http.StatusOK, "message", &page{Title: "Device connected", User: b.User,
		Message: "You can return to your device; it will finish signing in by itself.", Next: "/account/apps", Button: "See your connected apps"})
	return nil
}

// deviceCodesLimited is 429 (the error page, with Retry-After) when the
// IP or browser session of b has typed too many wrong user codes (RFC
// 8628 §5.1).
func (h *handlers) deviceCodesLimited(r *http.Request, b *identity.BrowserSession) error {
	for _, key := range []string{"ip " + h.k.ClientIP(r), "session " + b.SessionID} {
		if ok, wait := h.failedDeviceCodes.Check(key); !ok {
			return gatehouse.TooMany(wait)
		}
	}
	return nil
}

// wrongDeviceCode is err when it is not an unknown user code; an unknown
// one is counted against the IP and the session of b, and refused on the
// device page again (404).
func (h *handlers) wrongDeviceCode(r *http.Request, b *identity.BrowserSession, code string, err error) error {
	if gatehouse.ErrorKind(err) != gatehouse.KindNotFound {
		return err
	}
	h.failedDeviceCodes.Allow("ip " + h.k.ClientIP(r))
	h.failedDeviceCodes.Allow("session " + b.SessionID)
	return refused("device", &page{Title: "Connect a device", User: b.User, Code: code}, err, nil)
}
