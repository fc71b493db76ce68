package identity

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// The second-factor endpoints (issue 13): enrolment, confirmation, listing
// and removal of factors, recovery codes, and the sign-in's second step.

// factorJSON is a row of GET /v1/me/factors.
type factorJSON struct {
	ID          string  `json:"id"`
	Type        string  `json:"type"`
	Confirmed   bool    `json:"confirmed"`
	CreatedAt   string  `json:"created_at"`
	ConfirmedAt *string `json:"confirmed_at"`
}

func toFactor(f *Factor) factorJSON {
	out := factorJSON{ID: f.ID, Type: f.Kind, Confirmed: f.ConfirmedAt != nil, CreatedAt: httpjson.Stamp(f.CreatedAt)}
	if f.ConfirmedAt != nil {
		at := httpjson.Stamp(*f.ConfirmedAt)
		out.ConfirmedAt = &at
	}
	return out
}

// handleFactors handles "GET /v1/me/factors".
func (h *handlers) handleFactors(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	fs, left, err := h.svc.Factors(r.Context(), p)
	if err != nil {
		return err
	}
	rows := make([]factorJSON, len(fs))
	for i := range fs {
		rows[i] = toFactor(&fs[i])
	}
	httpjson.Write(w, http.StatusOK, struct {
		Factors           []factorJSON `json:"factors"`
		RecoveryCodesLeft int          `json:"recovery_codes_left"`
	}{rows, left})
	return nil
}

// handleEnrolTOTP handles "POST /v1/me/factors/totp".
func (h *handlers) handleEnrolTOTP(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	e, err := h.svc.EnrolTOTP(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, struct {
		Factor     factorJSON `json:"factor"`
		Secret     string     `json:"secret"`
		OTPAuthURI string     `json:"otpauth_uri"`
		QRCode     string     `json:"qr_code"`
	}{toFactor(&e.Factor), e.Secret, e.URI, e.QRCode})
	return nil
}

// handleConfirmFactor handles "POST /v1/me/factors/{fid}/confirm".
func (h *handlers) handleConfirmFactor(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Code string `json:"code"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	c, err := h.svc.ConfirmTOTP(r.Context(), p, r.PathValue("fid"), in.Code)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		Factor        factorJSON `json:"factor"`
		RecoveryCodes []string   `json:"recovery_codes"`
		AccessToken   string     `json:"access_token"`
		TokenType     string     `json:"token_type"`
		ExpiresAt     string     `json:"expires_at"`
	}{toFactor(&c.Factor), nonNil(c.RecoveryCodes), c.AccessToken, "Bearer", httpjson.Stamp(c.ExpiresAt)})
	return nil
}

// handleDeleteFactor handles "DELETE /v1/me/factors/{fid}".
func (h *handlers) handleDeleteFactor(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.RemoveFactor(r.Context(), p, r.PathValue("fid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "factor removed"})
	return nil
}

// handleRecoveryCodes handles "POST /v1/me/recovery-codes".
func (h *handlers) handleRecoveryCodes(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	codes, err := h.svc.NewRecoveryCodes(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, struct {
		RecoveryCodes []string `json:"recovery_codes"`
	}{codes})
	return nil
}

// handleSecondFactor handles "POST /v1/auth/mfa", the one route besides
// GET /v1/auth/me and /v1/auth/verify a session owing its second factor
// may call.
func (h *handlers) handleSecondFactor(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in Step
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	si, err := h.svc.SecondFactor(r.Context(), p, in, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handlePasskeyStepBegin handles "POST /v1/auth/mfa/passkey": the options
// of an assertion by one of the account's passkeys, for the step.
func (h *handlers) handlePasskeyStepBegin(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	o, err := h.svc.BeginPasskeyStep(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ToPasskeyOptions(o))
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
