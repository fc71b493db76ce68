package web_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestOrgKeyTokenVerifies checks that a service-account token is valid at
// GET /v1/auth/verify, naming the key, with the key's org and role.
func TestOrgKeyTokenVerifies(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.Do(t, "POST", "/v1/orgs", owner.Access, map[string]string{"name": "Key Org"}).Want(t, 200)
		orgID, access := org.Str("org.id"), org.Str("access_token")
		key := env.Do(t, "POST", "/v1/orgs/"+orgID+"/api-keys", access, map[string]any{"name": "deploy bot", "role": "admin"}).Want(t, 200)
		tok := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": key.Str("api_key.secret")}).Want(t, 200).Str("access_token")
		v := env.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 200)
		if v.Get("valid") != true || v.Str("user_id") != key.Str("api_key.id") || v.Str("name") != "deploy bot" ||
			v.Str("org_id") != orgID || v.Str("org_role") != "admin" {
			t.Fatalf("verify = %s; want valid, the key's id and name, org %s, role admin", v.Body, orgID)
		}
		env.Do(t, "DELETE", "/v1/orgs/"+orgID+"/api-keys/"+key.Str("api_key.id"), access, nil).Want(t, 200)
		env.Clock.Advance(3e9) // past the verify cache
		env.Do(t, "GET", "/v1/auth/verify", tok, nil).Want(t, 401)
	})
}
