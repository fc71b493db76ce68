package scim_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestScimTokens covers /v1/orgs/{id}/scim-tokens: owners and admins of a
// team org create (the secret once, in token, prefix scim_), list (no
// secret) and delete; other roles, strangers, keys and personal orgs are
// refused; a deleted token is refused at once; both are audited.
func TestScimTokens(t *testing.T) {
	t.Parallel()
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		path := "/v1/orgs/" + w.Org + "/scim-tokens"
		r := env.Do(t, "POST", path, w.Owner.Access, map[string]string{"name": "Okta"}).Want(t, 200)
		secret, id := r.Str("scim_token.token"), r.Str("scim_token.id")
		if !strings.HasPrefix(secret, "scim_") || len(secret) < 40 {
			t.Errorf("token = %q; want scim_ and a long random part", secret)
		}
		if p := r.Str("scim_token.prefix"); p != secret[:12] {
			t.Errorf("prefix = %q; want the secret's first 12 characters", p)
		}
		if !strings.HasSuffix(r.Str("base_url"), "/scim/v2") {
			t.Errorf("base_url = %q; want …/scim/v2", r.Str("base_url"))
		}
		var stored string
		if err := env.Store.DB().QueryRow(`SELECT hash FROM scim_tokens WHERE id = $1`, id).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored == secret || strings.Contains(stored, secret[5:]) {
			t.Errorf("the secret is stored as it is; want only its hash")
		}
		env.Do(t, "POST", path, w.Admin.Access, map[string]string{"name": "Entra"}).Want(t, 200)

		list := env.Do(t, "GET", path, w.Owner.Access, nil).Want(t, 200)
		toks := list.List(t, "scim_tokens")
		if len(toks) != 2 {
			t.Fatalf("list has %d tokens; want 2", len(toks))
		}
		for _, tk := range toks {
			if _, ok := tk["token"]; ok {
				t.Errorf("list shows a secret: %v", tk)
			}
		}

		for _, c := range []struct {
			name, token string
			want        int
		}{{"member", w.Member.Access, 403}, {"billing", w.Billing.Access, 403}, {"stranger", w.Stranger.Access, 404}, {"no token", "", 401}} {
			t.Run(c.name, func(t *testing.T) {
				env.Do(t, "POST", path, c.token, map[string]string{"name": "X bot"}).Want(t, c.want)
				env.Do(t, "GET", path, c.token, nil).Want(t, c.want)
				env.Do(t, "DELETE", path+"/"+id, c.token, nil).Want(t, c.want)
			})
		}
		// An org key's token is no full session.
		key := env.CreateOrgKey(t, w.Owner.Access, w.Org, map[string]any{"name": "Admin bot", "role": "admin"}).Str("api_key.secret")
		keyToken := env.Exchange(t, key).Want(t, 200).Str("access_token")
		env.Do(t, "POST", path, keyToken, map[string]string{"name": "Bot made"}).Want(t, 403)
		// A personal workspace has no directory.
		env.Do(t, "POST", "/v1/orgs/"+w.Owner.OrgID+"/scim-tokens", w.Owner.Access, map[string]string{"name": "Mine"}).Want(t, 403)
		// A bad name.
		env.Do(t, "POST", path, w.Owner.Access, map[string]string{"name": ""}).Want(t, 400)

		d := &directory{env: env, token: secret}
		d.do(t, "GET", "/Users", nil).Want(t, 200)
		env.Do(t, "DELETE", path+"/"+id, w.Owner.Access, nil).Want(t, 200)
		// Refused from the next request on: each reads the token's row.
		d.do(t, "GET", "/Users", nil).Want(t, 401)
		env.Do(t, "DELETE", path+"/"+id, w.Owner.Access, nil).Want(t, 404)
		(&directory{env: env, token: "scim_" + strings.Repeat("A", 43)}).do(t, "GET", "/Users", nil).Want(t, 401)
		(&directory{env: env, token: ""}).do(t, "GET", "/ServiceProviderConfig", nil).Want(t, 401)

		for _, action := range []string{"identity.scim_token.created", "identity.scim_token.deleted"} {
			es := env.Audit(t, w.Owner.Access, w.Org, "action="+action)
			if len(es) == 0 {
				t.Errorf("no %s audit entry", action)
			}
			for _, e := range es {
				testenv.CheckEntry(t, e)
			}
		}
	})
}
