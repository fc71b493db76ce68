package web

import (
	"encoding/json"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

type apiKeyJSON struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	OrgID      string   `json:"org_id"`
	Role       string   `json:"role,omitempty"`
	Tools      []string `json:"tools"`
	Prefix     string   `json:"prefix"`
	ExpiresAt  *string  `json:"expires_at"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
	Secret     string   `json:"secret,omitempty"`
}

func toAPIKey(k *accounts.APIKey) apiKeyJSON {
	tools := k.Tools
	if tools == nil {
		tools = []string{}
	}
	role := k.Role
	if k.Kind == accounts.KeyUser {
		role = ""
	}
	return apiKeyJSON{ID: k.ID, Name: k.Name, Kind: k.Kind, OrgID: k.OrgID, Role: role, Tools: tools, Prefix: k.Prefix,
		ExpiresAt: stampPtr(k.ExpiresAt), CreatedAt: stamp(k.CreatedAt), LastUsedAt: stampPtr(k.LastUsedAt)}
}

// keyInput is the body that creates an API key. Tools is raw so that an
// absent list (all tools) differs from an empty one (none).
type keyInput struct {
	Name          string          `json:"name"`
	OrgID         string          `json:"org_id"`
	Role          string          `json:"role"`
	Tools         json.RawMessage `json:"tools"`
	ExpiresInDays *int            `json:"expires_in_days"`
}

func (in *keyInput) domain() (accounts.KeyInput, error) {
	out := accounts.KeyInput{Name: in.Name, OrgID: in.OrgID, Role: in.Role, ExpiresInDays: in.ExpiresInDays}
	if len(in.Tools) > 0 && string(in.Tools) != "null" {
		if err := json.Unmarshal(in.Tools, &out.Tools); err != nil {
			return out, gatehouse.Invalid("tools must be an array of strings")
		}
		if out.Tools == nil {
			out.Tools = []string{}
		}
		out.ToolsSet = true
	}
	return out, nil
}

// writeKeys answers a key list (no secrets).
func writeKeys(w http.ResponseWriter, ks []accounts.APIKey) {
	out := make([]apiKeyJSON, len(ks))
	for i := range ks {
		out[i] = toAPIKey(&ks[i])
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"api_keys": out})
}

// createKey decodes a key body, calls create and answers the new key with
// its show-once secret: 200, not 201.
func createKey(w http.ResponseWriter, r *http.Request, create func(accounts.KeyInput) (*accounts.NewKey, error)) error {
	var raw keyInput
	if err := decode(r, &raw); err != nil {
		return err
	}
	in, err := raw.domain()
	if err != nil {
		return err
	}
	nk, err := create(in)
	if err != nil {
		return err
	}
	out := toAPIKey(nk.Key)
	out.Secret = nk.Secret
	httpjson.Write(w, http.StatusOK, map[string]any{"api_key": out})
	return nil
}

// handleUserKeys handles "GET /v1/me/api-keys".
func (s *Server) handleUserKeys(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ks, err := s.svc.UserKeys(r.Context(), p)
	if err != nil {
		return err
	}
	writeKeys(w, ks)
	return nil
}

// handleCreateUserKey handles "POST /v1/me/api-keys".
func (s *Server) handleCreateUserKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	return createKey(w, r, func(in accounts.KeyInput) (*accounts.NewKey, error) { return s.svc.CreateUserKey(r.Context(), p, in) })
}

// handleDeleteUserKey handles "DELETE /v1/me/api-keys/{kid}".
func (s *Server) handleDeleteUserKey(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.svc.RevokeUserKey(r.Context(), p, r.PathValue("kid")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"api key revoked"})
	return nil
}

// handleKeyExchange handles "POST /v1/auth/token".
func (s *Server) handleKeyExchange(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		APIKey string `json:"api_key"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.svc.ExchangeKey(r.Context(), in.APIKey)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, toOrgToken(t))
	return nil
}
