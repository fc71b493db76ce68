package identity

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// Limit is a named per-instance abuse limit (web's Limiter): burst, then
// one more each every. The API and the hosted page of one action ask for
// the same one, so a client has one budget for both.
type Limit struct {
	Name  string
	Burst int
	Every time.Duration
}

// Limiters is the part of a kernel that hands out named limiters.
type Limiters interface {
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
}

// From returns k's limiter of l (nil when limits are off).
func (l Limit) From(k Limiters) *ratelimit.Limiter { return k.Limiter(l.Name, l.Burst, l.Every) }

// The per-instance abuse limits of identity's endpoints, which its hosted
// pages share (docs/decisions.md gives the numbers' reasons). Recovery has
// the numbers of the magic-link request under names of its own, so that
// asking for one kind of link spends nothing of the other.
var (
	LimitRegister        = Limit{"register", 20, time.Minute}                // per IP
	LimitLogin           = Limit{"login", 30, 2 * time.Second}               // per IP
	LimitMagic           = Limit{"magic", 10, time.Minute}                   // per IP
	LimitMagicPerEmail   = Limit{"magicPerEmail", 5, 2 * time.Minute}        // per address
	LimitVerify          = Limit{"verify", 30, 2 * time.Second}              // per IP: every single-use token checked
	LimitKeyExchange     = Limit{"keyExchange", 300, 100 * time.Millisecond} // per IP
	LimitRecover         = Limit{"recover", 10, time.Minute}                 // per IP
	LimitRecoverPerEmail = Limit{"recoverPerEmail", 5, 2 * time.Minute}      // per address (its account key)
)

// RecoverSent is the one answer to a well-formed recovery request, known
// address or not.
const RecoverSent = "if the address has an account, a link to set a new password is on its way"

// handleRecover handles "POST /v1/auth/recover": 200 and the same message
// for every well-formed address (no enumeration); besides the per-IP limit,
// the service bounds the links asked for one address.
func (h *handlers) handleRecover(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Email string `json:"email"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	if err := h.svc.RequestRecovery(r.Context(), in.Email); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": RecoverSent})
	return nil
}

// handleRecoverVerify handles "POST /v1/auth/recover/verify": sets the new
// password and answers a session, like login; an account with a second
// factor presents it in the same body (method and code, as in POST
// /v1/auth/mfa).
func (h *handlers) handleRecoverVerify(w http.ResponseWriter, r *http.Request) error {
	var in Reset
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	si, err := h.svc.ResetPassword(r.Context(), in, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handleRecoverPasskey handles "POST /v1/auth/recover/passkey": the
// options of a passkey assertion for the reset link's factor, which POST
// /v1/auth/recover/verify then takes with method passkey.
func (h *handlers) handleRecoverPasskey(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	o, err := h.svc.BeginResetPasskey(r.Context(), in.Token)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ToPasskeyOptions(o))
	return nil
}
