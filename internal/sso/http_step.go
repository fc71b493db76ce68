package sso

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The hosted pages' second step (internal/pages, signin_mfa.go): its
// path and its pending cookie, __Host-gatehouse_mfa under https (path /)
// and gatehouse_mfa with path /signin on plain http.
const (
	stepPath          = "/signin/mfa"
	cookiePendingName = "gatehouse_mfa"
)

// toSecondStep hands a sign-in that owes the account's own second factor
// to the pages' step, as a password sign-in does: its refresh token in
// the pending cookie, the browser sent to the step page. The cookie is
// SameSite=Lax, not the pages' Strict: this response ends a navigation
// that started at the provider, and a Strict cookie would not reach the
// step page it redirects to; the step page's forms are guarded anyway.
func (h *handlers) toSecondStep(w http.ResponseWriter, r *http.Request, d *Done) {
	path := "/signin"
	if h.secure {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(cookiePendingName), Value: d.SignIn.RefreshToken, Path: path,
		MaxAge: int(identity.MFAPendingTTL.Seconds()), HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, stepPath+"?"+url.Values{"next": {d.Next}}.Encode(), http.StatusSeeOther)
}

// LinkCookie holds, for the hosted page at LinkPath, the link_token of a
// sign-in that found an existing account (__Host- under https).
const (
	LinkCookie = "gatehouse_link"
	LinkPath   = "/signin/link"
)

// linkRequired answers a callback that found an existing account: a
// browser (it asks for HTML) is sent to the hosted page that has the
// person sign in and confirm, the token in a cookie for that page, never
// in a URL; any other client gets 409 with the link_token.
func (h *handlers) linkRequired(w http.ResponseWriter, r *http.Request, lr *LinkRequired) {
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		httpjson.Write(w, http.StatusConflict, map[string]string{"error": lr.Error(), "link_token": lr.Token})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: h.cookieName(LinkCookie), Value: lr.Token, Path: "/", MaxAge: int(LinkTTL.Seconds()), HttpOnly: true,
		Secure: h.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, LinkPath, http.StatusSeeOther)
}
