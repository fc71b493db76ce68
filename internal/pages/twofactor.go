package pages

import (
	"errors"
	"html/template"
	"net/http"
	"regexp"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "totp-added", Text: "Authenticator app added: signing in now asks for its code. Your other sessions were signed out."},
	{Key: "factor-removed", Text: "Authenticator app removed: signing in no longer asks for its code. Your other sessions were signed out."},
	{Key: "setup-cancelled", Text: "Setup cancelled."},
	{Key: "codes-new", Text: "New recovery codes made: the old ones no longer work."},
}.add()

// The account's two-factor page: the TOTP factor (set up, confirmed with a
// first code, removed) and the recovery codes (counted, made again), for a
// signed-in browser, without a script. New recovery codes cross the
// redirect in the show-once cookie (flash.go), bound to the browser's
// session. Each change needs a recent sign-in, as in the API.

// twoFactorPath is the page's path.
const twoFactorPath = "/account/two-factor"

// twoFactorData is the page's own data.
type twoFactorData struct {
	Factors   []identity.Factor
	Confirmed bool // a confirmed TOTP factor
	CodesLeft int
	Codes     []string   // new recovery codes, shown once
	Enrolment *enrolView // a TOTP factor begun, waiting for its first code
}

// enrolView is an enrolment as the page shows it.
type enrolView struct {
	FactorID, Secret, Grouped, URI string
	QRCode                         template.URL // a PNG data: URL of URI
}

// newEnrolView is the view of factor id's enrolment of uri, secret and
// qr; qr must be a PNG data: URL (the identity service's).
func newEnrolView(id, uri, secret, qr string) *enrolView {
	var g []string
	for s := secret; s != ""; {
		n := min(4, len(s))
		g, s = append(g, s[:n]), s[n:]
	}
	v := &enrolView{FactorID: id, Secret: secret, Grouped: strings.Join(g, " "), URI: uri}
	if strings.HasPrefix(qr, "data:image/png;base64,") {
		v.QRCode = template.URL(qr)
	}
	return v
}

// twoFactorPage is the page of c with its factors and codes left.
func (h *handlers) twoFactorPage(r *http.Request, c *caller) (*page, *twoFactorData, error) {
	fs, left, err := h.svc.Factors(r.Context(), c.p)
	if err != nil {
		return nil, nil, err
	}
	d := &twoFactorData{Factors: fs, CodesLeft: left}
	for _, f := range fs {
		d.Confirmed = d.Confirmed || f.ConfirmedAt != nil
	}
	p := c.page(r, "Two-factor authentication", "two-factor")
	p.Data = d
	return p, d, nil
}

// handleTwoFactorPage handles "GET /account/two-factor": the factors, the
// codes left, and once, right after they were made, the new codes.
func (h *handlers) handleTwoFactorPage(w http.ResponseWriter, r *http.Request, c *caller) error {
	p, d, err := h.twoFactorPage(r, c)
	if err != nil {
		return err
	}
	// Shown only to the session that made them, while codes are left.
	if id, codes := h.takeShown(w, r, twoFactorPath); codes != "" && id == c.b.SessionID && d.CodesLeft > 0 {
		d.Codes = strings.Split(codes, ":")
		p.Script = copyScriptPath
	}
	h.render(w, r, http.StatusOK, "twofactor", p)
	return nil
}

// handleEnrolTOTP handles "POST /account/two-factor/totp": begins a TOTP
// factor and shows what the authenticator app needs, with the form of the
// first code.
func (h *handlers) handleEnrolTOTP(w http.ResponseWriter, r *http.Request, c *caller) error {
	e, err := h.svc.EnrolTOTP(r.Context(), c.p)
	if err != nil {
		return h.twoFactorRefused(r, c, err)
	}
	return h.showEnrolment(w, r, c, newEnrolView(e.Factor.ID, e.URI, e.Secret, e.QRCode), http.StatusOK, "")
}

// showEnrolment renders the page with enrolment v and, after a refused
// code, its message next to the code field.
func (h *handlers) showEnrolment(w http.ResponseWriter, r *http.Request, c *caller, v *enrolView, status int, codeErr string) error {
	p, d, err := h.twoFactorPage(r, c)
	if err != nil {
		return err
	}
	d.Enrolment, p.Script, p.imgData = v, copyScriptPath, true
	if codeErr != "" {
		p.Fields = map[string]string{"code": codeErr}
	}
	h.render(w, r, status, "twofactor", p)
	return nil
}

// handleConfirmTOTP handles "POST /account/two-factor/confirm": the first
// code of the factor begun. A refused code keeps the enrolment on screen
// (rebuilt from its otpauth URI) with the message next to the code field.
func (h *handlers) handleConfirmTOTP(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, uri := r.PostFormValue("factor_id"), r.PostFormValue("uri")
	out, err := h.svc.ConfirmTOTP(r.Context(), c.p, id, r.PostFormValue("code"))
	if err != nil {
		var e *gatehouse.Error
		secret, qr, uriErr := identity.TOTPSetup(uri)
		// A sign-in grown too old (403) is the page's refusal, which
		// offers to sign in again, not a wrong code.
		if !errors.As(err, &e) || e.Kind == gatehouse.KindInternal || e.Kind == gatehouse.KindForbidden || uriErr != nil {
			return h.twoFactorRefused(r, c, err)
		}
		return h.showEnrolment(w, r, c, newEnrolView(id, uri, secret, qr), h.k.StatusOf(e.Kind), sentence(e.Message))
	}
	if len(out.RecoveryCodes) > 0 {
		h.showOnce(w, twoFactorPath, c.b.SessionID, strings.Join(out.RecoveryCodes, ":"))
	}
	done(w, r, twoFactorPath, "totp-added")
	return nil
}

// handleRemoveFactor handles "POST /account/two-factor/remove": the
// factor, or a setup never confirmed (which ends no session).
func (h *handlers) handleRemoveFactor(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, outcome := r.PostFormValue("id"), "factor-removed"
	fs, _, err := h.svc.Factors(r.Context(), c.p)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if f.ID == id && f.ConfirmedAt == nil {
			outcome = "setup-cancelled"
		}
	}
	// Cancelling a setup begun loses nothing; turning a factor off does.
	if outcome == "factor-removed" && !h.confirmed(w, r, c, "two-factor", confirmStep{Title: "Turn off the authenticator app?",
		Message: "Signing in no longer asks for a code from your authenticator app, so a stolen password is enough to get in. Your other sessions are signed out.",
		Button:  "Turn off two-factor", Back: twoFactorPath}) {
		return nil
	}
	if err := h.svc.RemoveFactor(r.Context(), c.p, id); err != nil {
		return h.twoFactorRefused(r, c, err)
	}
	done(w, r, twoFactorPath, outcome)
	return nil
}

// handleNewRecoveryCodes handles "POST /account/two-factor/recovery-codes":
// a new set, shown once; the old set is void.
func (h *handlers) handleNewRecoveryCodes(w http.ResponseWriter, r *http.Request, c *caller) error {
	codes, err := h.svc.NewRecoveryCodes(r.Context(), c.p)
	if err != nil {
		return h.twoFactorRefused(r, c, err)
	}
	h.showOnce(w, twoFactorPath, c.b.SessionID, strings.Join(codes, ":"))
	done(w, r, twoFactorPath, "codes-new")
	return nil
}

// twoFactorRefused shows the page with the service's refusal above it; a
// change that needs a recent sign-in offers to sign in again and come
// back. An internal error is the error page.
func (h *handlers) twoFactorRefused(r *http.Request, c *caller, err error) error {
	var e *gatehouse.Error
	if !errors.As(err, &e) || e.Kind == gatehouse.KindInternal || e.Code == gatehouse.CodeReauthRequired {
		return err
	}
	p, _, perr := h.twoFactorPage(r, c)
	if perr != nil {
		return perr
	}
	return refused("twofactor", p, err, nil)
}

// recoveryCodeRE is the form of a recovery code (identity.newRecoveryCode:
// six groups; four before issue 23).
var recoveryCodeRE = regexp.MustCompile(`^[a-z2-7]{4}(-[a-z2-7]{4}){3}((-[a-z2-7]{4}){2})?$`)

// handleDownloadCodes handles "POST /account/two-factor/recovery-codes.txt":
// the codes on the page, sent back by its form, as a text file to keep
// (no script needed). Only codes of the recovery codes' form are written.
func (h *handlers) handleDownloadCodes(w http.ResponseWriter, r *http.Request, c *caller) error {
	codes := r.PostForm["code"]
	if len(codes) == 0 || len(codes) > identity.RecoveryCodes || !allMatch(codes, recoveryCodeRE) {
		h.render(w, r, http.StatusBadRequest, "error", &page{Title: "Request refused", User: c.b.User,
			Message: "These are not recovery codes. Go back to the page and try again."})
		return nil
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Content-Disposition", `attachment; filename="recovery-codes.txt"`)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.Write([]byte(h.brand.Name + " recovery codes for " + c.b.User.Email + "\nEach code works once.\n\n" + strings.Join(codes, "\n") + "\n"))
	return nil
}

// allMatch reports whether every s matches re.
func allMatch(ss []string, re *regexp.Regexp) bool {
	for _, s := range ss {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}
