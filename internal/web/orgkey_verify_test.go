package web_test

import (
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/google/uuid"
)

// TestOrgKeyTokenVerifies checks that a service-account token is valid at
// GET /v1/auth/verify, naming the key, with the key's org and role.
func TestOrgKeyTokenVerifies(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newOrgKeyWorld(t, env, "admin")
		orgID, access, key, tok := w.org, w.access, w.key, w.keyToken
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

// TestKeyTokenOtherOrgFullRoutes checks that a key token asking a full-session
// org route about another workspace gets 404 (outside its workspace), and
// 403 only for its own.
func TestKeyTokenOtherOrgFullRoutes(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		w := newOrgKeyWorld(t, env, "admin")
		orgID, tok := w.org, w.keyToken
		other := env.Do(t, "POST", "/v1/orgs", w.owner.Access, map[string]string{"name": "Other Org"}).Want(t, 200).Str("org.id")
		for _, path := range []string{"/invitations", "/api-keys"} {
			env.Do(t, "GET", "/v1/orgs/"+orgID+path, tok, nil).Want(t, 403)
			env.Do(t, "GET", "/v1/orgs/"+other+path, tok, nil).Want(t, 404)
			env.Do(t, "GET", "/v1/orgs/"+uuid.NewString()+path, tok, nil).Want(t, 404)
		}
		env.Do(t, "DELETE", "/v1/orgs/"+other, tok, nil).Want(t, 404)
		env.Do(t, "DELETE", "/v1/orgs/"+orgID, tok, nil).Want(t, 403)
	})
}

// TestMeWithKeyTokens checks GET /v1/auth/me with key-exchange tokens: the
// org context lists the token's tools (the org's enabled tools within the
// key's allowlist), and an org key's token answers with the key itself.
func TestMeWithKeyTokens(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner := env.Register(t)
		org := env.Do(t, "POST", "/v1/orgs", owner.Access, map[string]string{"name": "Me Org"}).Want(t, 200)
		orgID, access := org.Str("org.id"), org.Str("access_token")

		narrow := env.Do(t, "POST", "/v1/me/api-keys", owner.Access, map[string]any{"name": "narrow", "org_id": orgID, "tools": []string{"notes", "crm"}}).Want(t, 200)
		tok := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": narrow.Str("api_key.secret")}).Want(t, 200).Str("access_token")
		me := env.Do(t, "GET", "/v1/auth/me", tok, nil).Want(t, 200)
		if got := fmt.Sprint(me.Get("org.tools")); got != "[notes crm]" || me.Str("user.id") != owner.UserID || me.Str("org.id") != orgID {
			t.Errorf("me with a narrowed key = %s; want user %s, org %s, tools [notes crm]", me.Body, owner.UserID, orgID)
		}

		key := env.Do(t, "POST", "/v1/orgs/"+orgID+"/api-keys", access, map[string]any{"name": "deploy bot", "role": "member"}).Want(t, 200)
		otok := env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": key.Str("api_key.secret")}).Want(t, 200).Str("access_token")
		me = env.Do(t, "GET", "/v1/auth/me", otok, nil).Want(t, 200)
		if me.Str("user.id") != key.Str("api_key.id") || me.Str("user.name") != "deploy bot" || me.Str("org.id") != orgID || me.Str("org.role") != "member" {
			t.Errorf("me with an org key = %s; want the key as user, org %s, role member", me.Body, orgID)
		}
		env.Do(t, "DELETE", "/v1/orgs/"+orgID+"/api-keys/"+key.Str("api_key.id"), access, nil).Want(t, 200)
		env.Do(t, "GET", "/v1/auth/me", otok, nil).Want(t, 404)
	})
}

// TestOrgKeyOnPersonalRoutes checks that an org key's token, which has no
// person behind it, is refused with 403 on the routes about the caller.
func TestOrgKeyOnPersonalRoutes(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		tok := newOrgKeyWorld(t, env, "admin").keyToken
		env.Do(t, "PATCH", "/v1/me", tok, map[string]string{"name": "Robo"}).Want(t, 403)
		env.Do(t, "GET", "/v1/me/orgs", tok, nil).Want(t, 403)
		env.Do(t, "GET", "/v1/me/discoverable", tok, nil).Want(t, 403)
		env.Do(t, "POST", "/v1/orgs", tok, map[string]string{"name": "Robo Org"}).Want(t, 403)
	})
}

// orgKeyWorld is a team org of a new owner with an org key of role and its
// exchanged token.
type orgKeyWorld struct {
	owner       *testenv.Account
	org, access string // the org and the owner's token scoped to it
	key         *testenv.Resp
	keyToken    string
}

func newOrgKeyWorld(t *testing.T, env *testenv.Env, role string) *orgKeyWorld {
	t.Helper()
	w := &orgKeyWorld{owner: env.Register(t)}
	org := env.Do(t, "POST", "/v1/orgs", w.owner.Access, map[string]string{"name": "Key Org"}).Want(t, 200)
	w.org, w.access = org.Str("org.id"), org.Str("access_token")
	w.key = env.Do(t, "POST", "/v1/orgs/"+w.org+"/api-keys", w.access, map[string]any{"name": "deploy bot", "role": role}).Want(t, 200)
	w.keyToken = env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": w.key.Str("api_key.secret")}).Want(t, 200).Str("access_token")
	return w
}
