package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/identity"

	"golang.org/x/text/language"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "revoked", Text: "Session signed out.", Named: "The session on %s was signed out."},
	{Key: "others", Text: "Every other session was signed out."},
}.add()

// sessionRow is one session as the sessions page lists it.
type sessionRow struct {
	identity.Session
	Current bool
	Device  string // "Firefox on Windows", from the user agent
}

// device names the browser and system of a user agent in a few words, as
// a person recognises them, in lang; an agent it does not know is shown
// as sent.
func device(lang language.Tag, ua string) string {
	if ua == "" {
		return i18n.T(lang, "Unknown device")
	}
	pick := func(pairs [][2]string) string {
		for _, p := range pairs {
			if strings.Contains(ua, p[0]) {
				return p[1]
			}
		}
		return ""
	}
	// Order matters: Edge and Chrome also say Safari; Android also says Linux.
	browser := pick([][2]string{{"Edg/", "Edge"}, {"Firefox/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"}, {"curl/", "curl"}})
	system := pick([][2]string{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"}, {"Windows", "Windows"}, {"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"}})
	switch {
	case browser != "" && system != "":
		return i18n.Tf(lang, "%s on %s", browser, system)
	case browser != "":
		return browser
	}
	return ua
}

// handleSessionsPage handles "GET /account/sessions": the live sign-in
// sessions, this browser's marked.
func (h *handlers) handleSessionsPage(w http.ResponseWriter, r *http.Request, c *caller) error {
	ss, err := h.svc.Sessions(r.Context(), c.p)
	if err != nil {
		return err
	}
	rows := make([]sessionRow, 0, len(ss))
	others := false
	for _, s := range ss {
		rows = append(rows, sessionRow{Session: s, Current: s.ID == c.b.SessionID, Device: device(langOf(r), s.UserAgent)})
		others = others || (s.ID != c.b.SessionID && s.GrantID == "")
	}
	p := c.page(r, "Sessions", "sessions")
	p.Data = map[string]any{"Sessions": rows, "Others": others}
	h.render(w, r, http.StatusOK, "sessions", p)
	return nil
}

// handleRevokeSession handles "POST /account/sessions/revoke": one session
// (this browser's too, which signs it out).
func (h *handlers) handleRevokeSession(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PostFormValue("id")
	ss, err := h.svc.Sessions(r.Context(), c.p)
	if err != nil {
		return err
	}
	name := "another device"
	for _, s := range ss {
		if s.ID == id {
			name = device(langOf(r), s.UserAgent)
		}
	}
	if id == c.b.SessionID {
		name = "this browser"
	}
	if !h.confirmed(w, r, c, "sessions", confirmStep{Title: tr(r, "Sign out the session on %s?", name),
		Message: tr(r, "Whoever uses the session on %s is signed out and has to sign in again.", name),
		Button:  tr(r, "Sign out %s", name), Back: "/account/sessions"}) {
		return nil
	}
	if err := h.svc.RevokeSession(r.Context(), c.p, id); err != nil {
		return err
	}
	if id == c.b.SessionID {
		h.setCookie(w, h.sessionCookieName(), "", -1)
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return nil
	}
	h.doneNamed(w, r, "/account/sessions", "revoked", name)
	return nil
}

// handleRevokeOtherSessions handles "POST /account/sessions/revoke-others":
// every sign-in session but this browser's. Applications' sessions are
// left to the connected-apps page.
func (h *handlers) handleRevokeOtherSessions(w http.ResponseWriter, r *http.Request, c *caller) error {
	ss, err := h.svc.Sessions(r.Context(), c.p)
	if err != nil {
		return err
	}
	for _, s := range ss {
		if s.ID == c.b.SessionID || s.GrantID != "" {
			continue
		}
		// Not found: revoked meanwhile by another request.
		if err := h.svc.RevokeSession(r.Context(), c.p, s.ID); err != nil && gatehouse.ErrorKind(err) != gatehouse.KindNotFound {
			return err
		}
	}
	done(w, r, "/account/sessions", "others")
	return nil
}
