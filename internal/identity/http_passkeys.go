package identity

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// LimitPasskey bounds usernameless passkey sign-ins per IP (begin and
// finish each take a token): as many as password logins, which they
// stand beside; the hosted page's finish shares it.
var LimitPasskey = Limit{"passkey", 30, 2 * time.Second}

// mountPasskeys serves the passkey routes.
func mountPasskeys(m *http.ServeMux, k Kernel, h *handlers) {
	limit := LimitPasskey.From(k)
	m.Handle("POST /v1/auth/passkey/begin", k.PerIP(limit, h.handlePasskeySignInBegin))
	m.Handle("POST /v1/auth/passkey/finish", k.PerIP(limit, h.handlePasskeySignInFinish))
	m.Handle("GET /v1/me/passkeys", k.Full(h.handlePasskeys))
	m.Handle("POST /v1/me/passkeys/begin", k.Full(h.handlePasskeyRegisterBegin))
	m.Handle("POST /v1/me/passkeys/finish", k.Full(h.handlePasskeyRegisterFinish))
	m.Handle("PATCH /v1/me/passkeys/{pid}", k.Full(h.handleRenamePasskey))
	m.Handle("DELETE /v1/me/passkeys/{pid}", k.Full(h.handleDeletePasskey))
}

// PasskeyFinish is the body of a ceremony's finish: the ceremony id from
// its begin, the PublicKeyCredential as JSON (WebAuthn's toJSON shape)
// and, for a registration, the passkey's name.
type PasskeyFinish struct {
	CeremonyID string          `json:"ceremony_id"`
	Credential json.RawMessage `json:"credential"`
	Name       string          `json:"name"`
}

// DecodePasskeyFinish reads a finish body; the credential is required.
func DecodePasskeyFinish(r *http.Request) (*PasskeyFinish, error) {
	var in PasskeyFinish
	if err := httpjson.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.CeremonyID == "" {
		return nil, gatehouse.Invalid("ceremony_id is required")
	}
	if len(in.Credential) == 0 || string(in.Credential) == "null" {
		return nil, gatehouse.Invalid("credential is required")
	}
	return &in, nil
}

// PasskeyOptionsJSON is a begun ceremony as the API answers it.
type PasskeyOptionsJSON struct {
	CeremonyID string `json:"ceremony_id"`
	PublicKey  any    `json:"publicKey"`
}

// ToPasskeyOptions is o's JSON shape.
func ToPasskeyOptions(o *PasskeyOptions) PasskeyOptionsJSON {
	return PasskeyOptionsJSON{CeremonyID: o.CeremonyID, PublicKey: o.Options}
}

// passkeyJSON is a passkey as listed.
type passkeyJSON struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Transports     []string `json:"transports"`
	BackupEligible bool     `json:"backup_eligible"`
	BackedUp       bool     `json:"backed_up"`
	CreatedAt      string   `json:"created_at"`
	LastUsedAt     *string  `json:"last_used_at"`
}

func toPasskey(pk *Passkey) passkeyJSON {
	out := passkeyJSON{ID: pk.ID, Name: pk.Name, Transports: pk.Transports, BackupEligible: pk.BackupEligible, BackedUp: pk.BackedUp,
		CreatedAt: httpjson.Stamp(pk.CreatedAt), LastUsedAt: httpjson.StampPtr(pk.LastUsedAt)}
	if out.Transports == nil {
		out.Transports = []string{}
	}
	return out
}

// handlePasskeySignInBegin handles "POST /v1/auth/passkey/begin".
func (h *handlers) handlePasskeySignInBegin(w http.ResponseWriter, r *http.Request) error {
	o, err := h.svc.BeginPasskeySignIn(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ToPasskeyOptions(o))
	return nil
}

// handlePasskeySignInFinish handles "POST /v1/auth/passkey/finish": a
// session, as login answers.
func (h *handlers) handlePasskeySignInFinish(w http.ResponseWriter, r *http.Request) error {
	in, err := DecodePasskeyFinish(r)
	if err != nil {
		return err
	}
	si, err := h.svc.FinishPasskeySignIn(r.Context(), in.CeremonyID, in.Credential, h.k.SessionMeta(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toSession(si))
	return nil
}

// handlePasskeys handles "GET /v1/me/passkeys".
func (h *handlers) handlePasskeys(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	pks, err := h.svc.ListPasskeys(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]passkeyJSON, len(pks))
	for i := range pks {
		out[i] = toPasskey(&pks[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"passkeys": out})
	return nil
}

// handlePasskeyRegisterBegin handles "POST /v1/me/passkeys/begin".
func (h *handlers) handlePasskeyRegisterBegin(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	o, err := h.svc.BeginPasskeyRegistration(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ToPasskeyOptions(o))
	return nil
}

// handlePasskeyRegisterFinish handles "POST /v1/me/passkeys/finish".
func (h *handlers) handlePasskeyRegisterFinish(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	in, err := DecodePasskeyFinish(r)
	if err != nil {
		return err
	}
	pk, err := h.svc.FinishPasskeyRegistration(r.Context(), p, in.CeremonyID, in.Name, in.Credential)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, toPasskey(pk))
	return nil
}

// handleRenamePasskey handles "PATCH /v1/me/passkeys/{pid}".
func (h *handlers) handleRenamePasskey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	pk, err := h.svc.RenamePasskey(r.Context(), p, r.PathValue("pid"), in.Name)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toPasskey(pk))
	return nil
}

// handleDeletePasskey handles "DELETE /v1/me/passkeys/{pid}".
func (h *handlers) handleDeletePasskey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeletePasskey(r.Context(), p, r.PathValue("pid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "passkey removed"})
	return nil
}
