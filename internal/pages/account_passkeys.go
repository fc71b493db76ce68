package pages

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// The account's passkeys page: a minimal list with "Add a passkey" (the
// script's ceremony) and a remove form per passkey, for a signed-in
// browser. The full account pages are built elsewhere (issue 13).

// browserPrincipal is the caller of a signed-in browser as the domain
// sees a full session of that account, at the session's assurance level
// (so a workspace's require_mfa sees what the session presented).
func browserPrincipal(b *identity.BrowserSession) *gatehouse.Principal {
	return &gatehouse.Principal{UserID: b.User.ID, SessionID: b.SessionID, Via: b.Via, Assurance: b.Level}
}

// The notices of this page (?done=key).
var _ = pageNotices{
	{Key: "passkey-gone", Named: "The passkey %s was removed."},
	{Key: "passkey-renamed", Named: "Passkey renamed to “%s”."},
}.add()

// passkeysPage is "GET /account/passkeys": the caller's passkeys, each
// with its rename and remove forms, and the script that adds one.
func (h *handlers) passkeysPage(r *http.Request, c *caller) (*page, error) {
	pks, err := h.svc.ListPasskeys(r.Context(), c.p)
	if err != nil {
		return nil, err
	}
	p := c.page(r, "Passkeys", "passkeys")
	p.Passkeys, p.Script = pks, passkeyScriptPath
	return p, nil
}

// passkeyAddPath is the form of "Add a passkey". The script runs the
// ceremony itself; it posts the form only when the sign-in is too old, and
// the answer is signing in again in place (signin_again.go), which brings
// the person back to the passkeys page with the form ready: its button
// starts the ceremony there.
const passkeyAddPath = "/account/passkeys/add"

// handleAccountPasskeyAdd handles "POST /account/passkeys/add": signing in
// again when the sign-in is too old to add a passkey, else back to the
// page, whose script adds it.
func (h *handlers) handleAccountPasskeyAdd(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := h.svc.RequireRecentAuth(r.Context(), c.p, "add a passkey"); err != nil {
		return err
	}
	http.Redirect(w, r, "/account/passkeys", http.StatusSeeOther)
	return nil
}

// handleAccountPasskeyBegin handles "POST /account/passkeys/begin": the
// script's start of a registration, for the signed-in browser.
func (h *handlers) handleAccountPasskeyBegin(w http.ResponseWriter, r *http.Request) {
	b, err := h.browser(r)
	if err != nil || b == nil {
		h.jsonError(w, r, orSignedOut(err))
		return
	}
	o, err := h.svc.BeginPasskeyRegistration(r.Context(), browserPrincipal(b))
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, identity.ToPasskeyOptions(o))
}

// handleAccountPasskeyFinish handles "POST /account/passkeys/finish".
func (h *handlers) handleAccountPasskeyFinish(w http.ResponseWriter, r *http.Request) {
	b, err := h.browser(r)
	if err != nil || b == nil {
		h.jsonError(w, r, orSignedOut(err))
		return
	}
	in, err := identity.DecodePasskeyFinish(r)
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	if _, err := h.svc.FinishPasskeyRegistration(r.Context(), browserPrincipal(b), in.CeremonyID, in.Name, in.Credential); err != nil {
		h.jsonError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusCreated, map[string]string{"message": "passkey added"})
}

// handleAccountPasskeyRemove handles "POST /account/passkeys/remove", a
// form: no script needed to remove a passkey.
func (h *handlers) handleAccountPasskeyRemove(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := r.PostFormValue("id")
	pks, err := h.svc.ListPasskeys(r.Context(), c.p)
	if err != nil {
		return err
	}
	short, name := "", "this passkey"
	for _, pk := range pks {
		if pk.ID == id {
			short = passkeyName(pk)
			name = "the passkey " + short
		}
	}
	if !h.confirmed(w, r, c, "passkeys", confirmStep{Title: tr(r, "Remove %s?", name),
		Message: tr(r, "You can no longer sign in with %s. The device keeps it until you delete it there too.", name),
		Button:  "Remove the passkey", Back: "/account/passkeys"}) {
		return nil
	}
	if err := h.svc.DeletePasskey(r.Context(), c.p, id); err != nil {
		return err
	}
	h.doneNamed(w, r, "/account/passkeys", "passkey-gone", short)
	return nil
}

// handleAccountPasskeyRename handles "POST /account/passkeys/rename": a
// passkey's new name (404 for another's, 400 next to the field).
func (h *handlers) handleAccountPasskeyRename(w http.ResponseWriter, r *http.Request, c *caller) error {
	id, name := r.PostFormValue("id"), r.PostFormValue("name")
	if _, err := h.svc.RenamePasskey(r.Context(), c.p, id, name); err != nil {
		if gatehouse.ErrorKind(err) != gatehouse.KindInvalid {
			return err
		}
		p, perr := h.passkeysPage(asGet(r), c)
		if perr != nil {
			return perr
		}
		p.Data = id
		return refused("passkeys", p, err, map[string]string{"name-" + id: name}, "name")
	}
	h.doneNamed(w, r, "/account/passkeys", "passkey-renamed", strings.TrimSpace(name))
	return nil
}

// orSignedOut is err, or the answer to a browser that is not signed in.
func orSignedOut(err error) error {
	if err != nil {
		return err
	}
	return gatehouse.Errorf(gatehouse.KindUnauthorized, "sign in first")
}
