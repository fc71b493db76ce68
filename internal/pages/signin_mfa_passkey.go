package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/identity"
)

// pendingJSON is pending for the passkey script: the principal of the
// browser's pending sign-in, or a JSON 401 (the script shows it).
func (h *handlers) pendingJSON(w http.ResponseWriter, r *http.Request) (*gatehouse.Principal, bool) {
	secret := ""
	if c, err := r.Cookie(h.pendingCookieName()); err == nil {
		secret = c.Value
	}
	p, err := h.svc.PendingPrincipal(r.Context(), secret)
	if err != nil {
		h.jsonError(w, r, err)
		return nil, false
	}
	return p, true
}

// handleStepPasskeyBegin handles "POST /signin/mfa/passkey/begin": request
// options for one of the pending account's passkeys. JSON out, behind the
// cross-origin guard and the per-IP passkey limit.
func (h *handlers) handleStepPasskeyBegin(w http.ResponseWriter, r *http.Request) {
	if h.limited(r, h.passkey) {
		h.jsonError(w, r, gatehouse.TooMany(0))
		return
	}
	p, ok := h.pendingJSON(w, r)
	if !ok {
		return
	}
	o, err := h.svc.BeginPasskeyStep(r.Context(), p)
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	httpjson.Write(w, http.StatusOK, identity.ToPasskeyOptions(o))
}

// handleStepPasskey handles "POST /signin/mfa/passkey": the passkey's
// assertion takes the step; as the code form does, success replaces the
// pending sign-in with an aal2 browser session, and the answer says where
// to go next.
func (h *handlers) handleStepPasskey(w http.ResponseWriter, r *http.Request) {
	p, ok := h.pendingJSON(w, r)
	if !ok {
		return
	}
	var in passkeyNext
	if err := httpjson.Decode(r, &in); err != nil {
		h.jsonError(w, r, err)
		return
	}
	si, err := h.svc.SecondFactor(r.Context(), p, identity.Step{Method: identity.FactorPasskey, CeremonyID: in.CeremonyID, Credential: in.Credential},
		h.k.SessionMeta(r))
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	h.setPending(w, "", -1)
	h.endPrevious(r, si.RefreshToken)
	h.setCookie(w, h.sessionCookieName(), si.RefreshToken, 0)
	h.setCookie(w, h.hostCookie(cookieNext), "", -1)
	httpjson.Write(w, http.StatusOK, map[string]string{"next": safeNext(in.Next)})
}
