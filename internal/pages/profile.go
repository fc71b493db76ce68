package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "profile", Text: "Profile saved."},
	{Key: "resent", Text: "A new confirmation link is on its way."},
	{Key: "throttled", Text: "A confirmation link was sent less than a minute ago: check your inbox."},
	{Key: "verified", Text: "Your email address is already confirmed."},
	{Key: "password", Text: "Password saved. Your other sessions were signed out."},
	{Key: "password-keys", Text: "Password saved. Your other sessions were signed out and your personal API keys revoked."},
}.add()

// profilePage is "GET /account", the account page of c: profile, email
// and password.
func (h *handlers) profilePage(r *http.Request, c *caller) *page {
	p := c.page(r, "Account", "profile")
	p.Values = map[string]string{"name": c.b.User.Name, "avatar_url": c.b.User.AvatarURL}
	p.Data = map[string]any{"HasPassword": c.b.User.PasswordHash != "", "Min": identity.MinPassword}
	return p
}

// profileView serves profilePage through the adapter (consoleView).
func (h *handlers) profileView(r *http.Request, c *caller) (*page, error) {
	return h.profilePage(r, c), nil
}

// handleProfile handles "POST /account/profile": name and avatar URL (an
// empty avatar URL removes it).
func (h *handlers) handleProfile(w http.ResponseWriter, r *http.Request, c *caller) error {
	name, avatar := r.PostFormValue("name"), r.PostFormValue("avatar_url")
	patch := identity.ProfilePatch{Name: &name}
	if avatar != "" || c.b.User.AvatarURL != "" {
		patch.AvatarURL = &avatar
	}
	// The language preference (issue 30 item 10), when the form has it.
	if r.PostForm.Has("language") {
		lang := r.PostFormValue("language")
		patch.Language = &lang
	}
	if _, err := h.svc.UpdateProfile(r.Context(), c.p, patch); err != nil {
		p := h.profilePage(r, c)
		p.Notice = ""
		return refused("profile", p, err, map[string]string{"name": name, "avatar_url": avatar}, "name", "avatar_url", "language")
	}
	done(w, r, "/account", "profile")
	return nil
}

// handleResend handles "POST /account/verify-email": a new confirmation link.
func (h *handlers) handleResend(w http.ResponseWriter, r *http.Request, c *caller) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	outcome, err := h.svc.ResendVerification(r.Context(), c.p)
	if err != nil {
		return err
	}
	key := map[string]string{identity.ResendSent: "resent", identity.ResendThrottled: "throttled", identity.ResendAlreadyVerified: "verified"}[outcome]
	done(w, r, "/account", key)
	return nil
}

// handlePassword handles "POST /account/password": sets the first
// password or changes it (the current one required then). The other
// sessions are signed out; this browser's stays. The personal API keys
// are revoked too when the box "Also revoke my personal API keys" is
// ticked (it is not by default, as in the API).
func (h *handlers) handlePassword(w http.ResponseWriter, r *http.Request, c *caller) error {
	ch := identity.PasswordChange{Current: r.PostFormValue("current_password"), New: r.PostFormValue("new_password"),
		RevokeKeys: r.PostFormValue("revoke_api_keys") == "on"}
	err := h.svc.ChangePassword(r.Context(), c.p, ch, h.k.SessionMeta(r))
	if err != nil {
		p := h.profilePage(r, c)
		p.Notice = ""
		if ch.RevokeKeys {
			p.Values["revoke_api_keys"] = "on"
		}
		return refused("profile", p, err, p.Values, "new_password", "current_password")
	}
	if ch.RevokeKeys {
		done(w, r, "/account", "password-keys")
		return nil
	}
	done(w, r, "/account", "password")
	return nil
}
