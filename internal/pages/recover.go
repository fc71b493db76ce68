package pages

import (
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// handleRecoverPage handles "GET /recover", the form that asks for a
// password-reset link (linked from the sign-in page).
func (h *handlers) handleRecoverPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "recover", &page{Title: "Forgot your password?", Email: h.prefill(w, r, "/recover")})
}

// tooManyLinks is the answer of this page and of the sign-in link's past
// the per-IP or the per-address limit.
const tooManyLinks = "Too many links requested. Wait a few minutes and try again."

// refusedByLimit reports whether err is a limit's refusal.
func refusedByLimit(err error) bool {
	e, ok := errors.AsType[*gatehouse.Error](err)
	return ok && e.Kind == gatehouse.KindTooMany
}

// handleRecover handles "POST /recover": the API's request with its
// limits, and the same answer for every well-formed address.
func (h *handlers) handleRecover(w http.ResponseWriter, r *http.Request) error {
	email := r.PostFormValue("email")
	_, display, err := gatehouse.ParseEmail(email)
	if err != nil {
		h.render(w, r, http.StatusBadRequest, "recover", &page{Title: "Forgot your password?", Email: email, Error: sentence(err.(*gatehouse.Error).Message)})
		return nil
	}
	// The per-IP limit is the API route's; the service keeps the address's.
	if ok, _ := h.recover.Allow(h.k.ClientIP(r)); !ok {
		err = gatehouse.TooMany(0)
	} else {
		err = h.svc.RequestRecovery(r.Context(), email)
	}
	if refusedByLimit(err) {
		h.render(w, r, http.StatusTooManyRequests, "recover", &page{Title: "Forgot your password?", Email: email, Error: tooManyLinks})
		return nil
	} else if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "message", &page{Title: "Check your email",
		Message: tr(r, "If %s has an account, a link to choose a new password is on its way. It works once, within 1 hour.", display),
		Resend:  &resend{Action: "/recover", Hidden: []hidden{{"email", email}}}})
	return nil
}

// handleResetPage handles "GET /reset-password?token=…": the form for
// the new password, with the second factor's fields when the link's
// account has one. Only the POST uses the link (mail scanners open
// links); a link used already or expired says so instead of the form.
func (h *handlers) handleResetPage(w http.ResponseWriter, r *http.Request) error {
	tok := r.URL.Query().Get("token")
	if state, _, err := h.svc.MailedLink(r.Context(), tok, identity.PurposePasswordReset); err == nil && (state == identity.LinkUsed || state == identity.LinkExpired) {
		// Said before anyone types a new password into a form that
		// would be refused.
		p := &page{Title: "This link was used already", Next: "/recover", Button: "Get a new link",
			Message: "This link to choose a new password was used already, or a newer link replaced it. Each link works once. If you still need a new password, ask for a new link."}
		if state == identity.LinkExpired {
			p.Title, p.Message = "This link has expired", "This link to choose a new password has expired: each works for 1 hour. Ask for a new link."
		}
		h.render(w, r, http.StatusGone, "message", p)
		return nil
	}
	owed, err := h.svc.ResetFactors(r.Context(), tok)
	if err != nil && gatehouse.ErrorKind(err) == gatehouse.KindInternal {
		return err
	}
	h.render(w, r, http.StatusOK, "reset", resetPage(tok, owed, "", nil))
	return nil
}

// resetPage is the reset form of the link tok, asking for a second
// factor when owed lists any (with the passkey script when a passkey is
// among them), with an error and the field it is about.
func resetPage(tok string, owed []string, msg string, fields map[string]string) *page {
	p := &page{Title: "Choose a new password", Token: tok, Error: msg, Fields: fields, Data: map[string]any{"Factor": len(owed) > 0}}
	if slices.Contains(owed, identity.FactorPasskey) {
		p.Script = passkeyScriptPath
	}
	return p
}

// handleReset handles "POST /reset-password": sets the password, starts
// the browser session and lands on the sign-in page. An account with a
// second factor gives a code from its authenticator app ("code") or a
// recovery code ("recovery_code") in the same form. A refused password
// or code shows the form again with the reason while the link still
// works (it is not spent); a bad link shows the error page.
func (h *handlers) handleReset(w http.ResponseWriter, r *http.Request) error {
	if h.limited(r, h.verify) {
		h.tooMany(w, r)
		return nil
	}
	in := identity.Reset{Token: r.PostFormValue("token"), NewPassword: r.PostFormValue("new_password")}
	if code := strings.TrimSpace(r.PostFormValue("code")); code != "" {
		in.Step = identity.Step{Method: identity.FactorTOTP, Code: code}
	} else if code := strings.TrimSpace(r.PostFormValue("recovery_code")); code != "" {
		in.Step = identity.Step{Method: identity.FactorRecoveryCode, Code: code}
	}
	si, err := h.svc.ResetPassword(r.Context(), in, h.k.SessionMeta(r))
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal && in.Token != "" {
		// The link still works: the form again, with the reason.
		if owed, lerr := h.svc.ResetFactors(r.Context(), in.Token); lerr == nil {
			h.refuseReset(w, r, in, owed, e)
			return nil
		}
	}
	if err != nil {
		return err
	}
	h.signedIn(w, r, si, "")
	return nil
}

// refuseReset shows the reset form again with e's reason next to the
// field it is about.
func (h *handlers) refuseReset(w http.ResponseWriter, r *http.Request, in identity.Reset, owed []string, e *gatehouse.Error) {
	msg := sentence(strings.Replace(e.Message, "new_password", "the new password", 1))
	field := "new_password"
	switch {
	case e.Kind == gatehouse.KindTooMany:
		msg, field = "Too many attempts. Wait a few minutes and try again.", "code"
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	case e.Kind == gatehouse.KindForbidden:
		msg, field = "This account has two-factor authentication: enter a code from your authenticator app, or a recovery code.", "code"
	case in.Method == identity.FactorRecoveryCode:
		field = "recovery_code"
	case in.Method != "":
		field = "code"
	}
	h.render(w, r, h.k.StatusOf(e.Kind), "reset", resetPage(in.Token, owed, msg, map[string]string{field: msg}))
}

// handleResetPasskeyBegin handles "POST /reset-password/passkey/begin":
// request options for one of the reset link's account's passkeys, its
// second factor. JSON {token} in and out, behind the cross-origin guard
// and the per-IP passkey limit; the link is only read.
func (h *handlers) handleResetPasskeyBegin(w http.ResponseWriter, r *http.Request) {
	if h.limited(r, h.passkey) {
		h.jsonError(w, r, gatehouse.TooMany(0))
		return
	}
	var in struct {
		Token string `json:"token"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		h.jsonError(w, r, err)
		return
	}
	o, err := h.svc.BeginResetPasskey(r.Context(), in.Token)
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, identity.ToPasskeyOptions(o))
}

// handleResetPasskey handles "POST /reset-password/passkey": the new
// password with the passkey's assertion as the second factor; as the
// form does, success starts the browser session (at aal2), and the
// answer says where to go next.
func (h *handlers) handleResetPasskey(w http.ResponseWriter, r *http.Request) {
	if h.limited(r, h.verify) {
		h.jsonError(w, r, gatehouse.TooMany(0))
		return
	}
	var in struct {
		Token       string `json:"token"`
		NewPassword string `json:"new_password"`
		identity.PasskeyFinish
	}
	if err := httpjson.Decode(r, &in); err != nil {
		h.jsonError(w, r, err)
		return
	}
	si, err := h.svc.ResetPassword(r.Context(), identity.Reset{Token: in.Token, NewPassword: in.NewPassword,
		Step: identity.Step{Method: identity.FactorPasskey, CeremonyID: in.CeremonyID, Credential: in.Credential}}, h.k.SessionMeta(r))
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	h.endPrevious(r, si.RefreshToken)
	h.setCookie(w, h.sessionCookieName(), si.RefreshToken, 0)
	h.setCookie(w, cookieNext, "", -1)
	httpjson.Write(w, http.StatusOK, map[string]string{"next": "/"})
}
