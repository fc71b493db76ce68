package workspace

import (
	"encoding/json"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// teamInput is the body that creates or changes a team: the fields
// present.
type teamInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// domainInput is the body that claims a domain or changes its mode.
type domainInput struct {
	Domain string `json:"domain"`
	Mode   string `json:"mode"`
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

func (in *keyInput) domain() (KeyInput, error) {
	out := KeyInput{Name: in.Name, OrgID: in.OrgID, Role: in.Role, ExpiresInDays: in.ExpiresInDays}
	if len(in.Tools) > 0 && string(in.Tools) != "null" {
		if err := json.Unmarshal(in.Tools, &out.Tools); err != nil {
			return out, gatehouse.InvalidField("tools", "tools must be an array of strings")
		}
		if out.Tools == nil {
			out.Tools = []string{}
		}
		out.ToolsSet = true
	}
	return out, nil
}

// CreateKey decodes the body that creates an API key, calls create and
// answers the new key with its show-once secret (200, not 201): for a
// workspace's keys here and the personal keys in identity.
func CreateKey(w http.ResponseWriter, r *http.Request, create func(KeyInput) (*NewKey, error)) error {
	var raw keyInput
	if err := httpjson.Decode(r, &raw); err != nil {
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
