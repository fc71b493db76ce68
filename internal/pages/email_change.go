package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/identity"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "email-link", Text: "A confirmation link is on its way to your new address. Your address stays as it is until you open it."},
}.add()

// handleChangeEmail handles "POST /account/email": a confirmation link to
// the new address; the account keeps its address until it is opened. A
// stale sign-in signs in again and comes back to this form (refuse).
func (h *handlers) handleChangeEmail(w http.ResponseWriter, r *http.Request, c *caller) error {
	email := r.PostFormValue("email")
	if _, err := h.svc.RequestEmailChange(r.Context(), c.p, email); err != nil {
		p := h.profilePage(r, c)
		p.Notice = ""
		values := p.Values
		values["email"] = email
		return refused("profile", p, err, values, "email")
	}
	done(w, r, "/account", "email-link")
	return nil
}

// handleEmailChangePage handles "GET /account/email/confirm?token=…", the
// link mailed to the new address. It only shows a button: mail scanners
// open links, so the change is made on POST. A link used already or
// expired says so at once, as the other mailed links do.
func (h *handlers) handleEmailChangePage(w http.ResponseWriter, r *http.Request) {
	if h.spentChangeLink(w, r, r.URL.Query().Get("token")) {
		return
	}
	h.render(w, r, http.StatusOK, "confirm", &page{Title: "Confirm your new email address",
		Message: tr(r, "Confirm that this address is yours and that you asked to move your %s account to it. If you did not ask, close this page.", h.brand.Name),
		Action:  identity.ChangeEmailPath, Token: r.URL.Query().Get("token"), Button: "Use this email address"})
}

// spentChangeLink answers for an email change link that was used (a
// second click), replaced or expired, saying which and whether the account
// uses the address already; false for any other link.
func (h *handlers) spentChangeLink(w http.ResponseWriter, r *http.Request, tok string) bool {
	return h.spentLink(w, r, tok, identity.PurposeChangeEmail, func(state identity.LinkState, moved bool) *page {
		p := &page{Title: "This link was used already", Next: "/", Button: "Go to your account"}
		switch {
		case state == identity.LinkUsed && moved:
			p.Message = "This link was used already: your account uses this email address. There is nothing more to do."
		case state == identity.LinkUsed:
			p.Message = "This link was used already, or a newer link replaced it. To move your account to this address, ask for a new link on your account page."
		default:
			p.Title, p.Message = "This link has expired", "This link to change your email address has expired: each works for 24 hours. Ask for a new one on your account page."
		}
		return p
	})
}

// handleEmailChange handles "POST /account/email/confirm".
func (h *handlers) handleEmailChange(w http.ResponseWriter, r *http.Request) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	ch, err := h.svc.ConfirmEmailChange(r.Context(), r.PostFormValue("token"))
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "message", &page{Title: "Email address changed",
		Message: tr(r, "Your account now uses %s. Sign in with it from now on; %s was told of the change.", ch.User.Email, ch.From), Next: "/"})
	return nil
}

// handleEmailUndoPage handles "GET /account/email/undo?token=…", the link
// of the notice mailed to the old address.
func (h *handlers) handleEmailUndoPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "confirm", &page{Title: "Report an email change you did not make",
		Message: "This puts this address back on the account, signs everyone out and removes its password, two-factor settings, passkeys and API keys. Then sign in with an emailed sign-in link and choose a new password.",
		Action:  identity.UndoEmailPath, Token: r.URL.Query().Get("token"), Button: "It was not me: undo the change"})
}

// handleEmailUndo handles "POST /account/email/undo".
func (h *handlers) handleEmailUndo(w http.ResponseWriter, r *http.Request) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	u, err := h.svc.UndoEmailChange(r.Context(), r.PostFormValue("token"))
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "message", &page{Title: "Change undone",
		Message: tr(r, "Your account uses %s again and everyone was signed out of it. Sign in with an emailed link and choose a new password.", u.Email),
		Next:    "/signin", Button: "Sign in"})
	return nil
}
