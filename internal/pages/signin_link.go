package pages

import (
	"errors"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/sso"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "linked", Text: "The sign-in is linked to your account."},
}.add()

// The page that confirms a pending link (issue 27): a single sign-on or
// social sign-in found an existing account of its address, and the
// callback sent the browser here with the link_token in a cookie. The
// person signs in to the account as usual (password, passkey or emailed
// link), then presses the button; sso.ConfirmLink checks the rest.

// linkToken is the pending link's token the callback left, "" when none.
func (h *handlers) linkToken(r *http.Request) string {
	if c, err := r.Cookie(h.hostCookie(sso.LinkCookie)); err == nil {
		return c.Value
	}
	return ""
}

// handleLinkPage handles "GET /signin/link".
func (h *handlers) handleLinkPage(w http.ResponseWriter, r *http.Request) error {
	if h.linkToken(r) == "" {
		h.render(w, r, http.StatusNotFound, "message", &page{Title: "Nothing to link",
			Message: "This link request expired or was used. Sign in with the provider again to start over."})
		return nil
	}
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	if b == nil {
		signInFirst(w, r, "link")
		return nil
	}
	h.renderLink(w, r, b, http.StatusOK, "")
	return nil
}

// renderLink shows the confirmation to b's account, with msg as its error.
func (h *handlers) renderLink(w http.ResponseWriter, r *http.Request, b *identity.BrowserSession, status int, msg string) {
	h.render(w, r, status, "linkconfirm", &page{Title: "Link your sign-in", User: b.User, Error: msg, Next: sso.LinkPath,
		SignIn: "/signin?fresh=1&next=" + sso.LinkPath})
}

// handleLink handles "POST /signin/link": the person's confirmation.
func (h *handlers) handleLink(w http.ResponseWriter, r *http.Request) error {
	b, err := h.browser(r)
	if err != nil {
		return err
	}
	if b == nil {
		signInFirst(w, r, "link")
		return nil
	}
	p := browserPrincipal(b)
	err = h.sso.ConfirmLink(r.Context(), p, h.linkToken(r))
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		h.renderLink(w, r, b, h.k.StatusOf(e.Kind), sentence(e.Message))
		return nil
	}
	if err != nil {
		return err
	}
	h.setCookie(w, h.hostCookie(sso.LinkCookie), "", -1)
	done(w, r, "/account/identities", "linked")
	return nil
}
