package pages

import (
	_ "embed"
	"errors"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

//go:embed passkey.js
var passkeyScript []byte

// passkeyScriptPath is where the pages load their one script from.
const passkeyScriptPath = "/assets/passkey.js"

// handlePasskeyScript handles "GET /assets/passkey.js".
func handlePasskeyScript(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(passkeyScript)
}

// handleSignInPasskey handles "POST /signin/passkey", the script's finish
// of a sign-in begun at POST /v1/auth/passkey/begin: it checks the
// assertion, starts the browser session (ending the browser's previous
// one, as every sign-in does) and answers where to go next.
// JSON in and out (the script's fetch), behind the cross-origin guard and
// the per-IP passkey limit the API shares.
func (h *handlers) handleSignInPasskey(w http.ResponseWriter, r *http.Request) {
	if h.limited(r, h.passkey) {
		h.jsonError(w, r, gatehouse.TooMany(0))
		return
	}
	var in passkeyNext
	if err := httpjson.Decode(r, &in); err != nil {
		h.jsonError(w, r, err)
		return
	}
	si, err := h.svc.FinishPasskeySignIn(r.Context(), in.CeremonyID, in.Credential, h.k.SessionMeta(r))
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	next := safeNext(in.Next)
	if len(si.Factors) > 0 {
		// A passkey without user verification owes the account's factor.
		h.keepPending(w, r, si.RefreshToken)
		next = stepURL(next)
	} else {
		// As every sign-in on the pages: the browser's previous session ends.
		h.endPrevious(r, si.RefreshToken)
		h.setCookie(w, h.sessionCookieName(), si.RefreshToken, 0)
		h.setCookie(w, h.hostCookie(cookieNext), "", -1)
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"next": next})
}

// passkeyNext is what the script sends to finish a ceremony of a sign-in:
// the ceremony, the credential and where to go next.
type passkeyNext struct {
	identity.PasskeyFinish
	Next string `json:"next"`
}

// jsonError answers the script with {"error": message} and the status of
// the error's kind; an unexpected error is logged and answered 500.
func (h *handlers) jsonError(w http.ResponseWriter, r *http.Request, err error) {
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
		body := map[string]string{"error": errorText(langOf(r), sentence(e.Message))}
		if e.Code != "" {
			body["code"] = e.Code // the script signs in again on reauth_required
		}
		httpjson.Write(w, h.k.StatusOf(e.Kind), body)
		return
	}
	id := h.k.RequestID(r)
	h.log.Error("page internal error", "request_id", id, "path", r.URL.Path, "err", err)
	httpjson.Write(w, http.StatusInternalServerError, map[string]string{"error": tr(r, "%s could not finish this request (request id %s). Try again in a moment.", h.brand.Name, id)})
}
