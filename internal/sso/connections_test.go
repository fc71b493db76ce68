package sso_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestConnectionsLifecycle: an owner adds, reads, changes and deletes a
// connection; the secret is never answered; each change is audited.
func TestConnectionsLifecycle(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		r := env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, nil).Want(t, 200)
		if strings.Contains(string(r.Body), idpSecret) || r.Get("connection.client_secret") != nil {
			t.Errorf("connection answered %s; want no client secret", r.Body)
		}
		if r.Str("connection.redirect_uri") != env.URL+"/v1/sso/callback" || r.Str("connection.default_role") != "member" {
			t.Errorf("connection = %s; want redirect_uri %s/v1/sso/callback and default_role member", r.Body, env.URL)
		}
		list := env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso", f.owner.Token, nil).Want(t, 200).List(t, "connections")
		if len(list) != 1 {
			t.Errorf("connections = %v; want one", list)
		}
		r = env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"default_role": "admin", "name": "Okta"}).Want(t, 200)
		if r.Str("connection.default_role") != "admin" || r.Str("connection.name") != "Okta" {
			t.Errorf("patched connection = %s; want default_role admin, name Okta", r.Body)
		}
		env.Call(t, "PATCH", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, map[string]any{"default_role": "owner"}).Want(t, 400)
		env.Call(t, "DELETE", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, nil).Want(t, 200)
		env.Call(t, "GET", "/v1/orgs/"+f.org+"/sso/"+f.conn, f.owner.Token, nil).Want(t, 404)
		var actions []string
		for _, e := range env.Audit(t, f.owner.Token, f.org, "") {
			actions = append(actions, e["action"].(string))
		}
		for _, want := range []string{"identity.sso.connection_created", "identity.sso.connection_updated", "identity.sso.connection_deleted"} {
			if !slices.Contains(actions, want) {
				t.Errorf("audit actions = %v; want %s", actions, want)
			}
		}
	})
}

// TestConnectionsSecretSealed: the secret is not stored in the clear.
func TestConnectionsSecretSealed(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		var stored string
		if err := env.Store.DB().QueryRow(`SELECT client_secret FROM sso_connections WHERE id = $1`, f.conn).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored == "" || strings.Contains(stored, idpSecret) {
			t.Errorf("stored secret = %q; want it sealed", stored)
		}
	})
}

// TestConnectionsAccess: members, billing and strangers cannot manage
// connections; a personal workspace has none.
func TestConnectionsAccess(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		w := env.NewWorld(t)
		path := "/v1/orgs/" + w.Org + "/sso"
		env.Call(t, "GET", path, w.Member.Token, nil).Want(t, 403)
		env.Call(t, "GET", path, w.Billing.Token, nil).Want(t, 403)
		env.Call(t, "GET", path, w.Stranger.Token, nil).Want(t, 404)
		env.Call(t, "GET", path, w.Admin.Token, nil).Want(t, 200)
		env.Call(t, "GET", "/v1/orgs/"+w.Owner.OrgID+"/sso", w.Owner.Token, nil).Want(t, 403)
		env.Call(t, "POST", path, w.Member.Token, map[string]any{"issuer": "https://idp.test", "client_id": "x", "client_secret": "y",
			"domains": []string{"x.test"}}).Want(t, 403)
	})
}

// TestConnectionsDomains: an unverified domain, another workspace's
// domain, or a domain another connection serves cannot be bound.
func TestConnectionsDomains(t *testing.T) {
	testenv.RunWith(t, opts, func(t *testing.T, env *testenv.Env) {
		f := newFixture(t, env)
		body := func(domain string) map[string]any {
			return map[string]any{"issuer": f.idp.URL, "client_id": idpClient, "client_secret": idpSecret, "domains": []string{domain}}
		}
		claimed := testenv.Domain()
		env.ClaimDomain(t, f.owner.Token, f.org, claimed, "")
		t.Run("unverified", func(t *testing.T) {
			env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, body(claimed)).Want(t, 400)
		})
		t.Run("another workspace's", func(t *testing.T) {
			other, org := env.Team(t)
			theirs := testenv.Domain()
			env.VerifiedDomain(t, other.Token, org, theirs, "")
			env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, body(theirs)).Want(t, 400)
		})
		t.Run("served by another connection", func(t *testing.T) {
			env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, body(f.domain)).Want(t, 409)
		})
		t.Run("issuer not answering as itself", func(t *testing.T) {
			b := body(f.domain)
			b["issuer"] = f.idp.URL + "/other"
			env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, b).Want(t, 400)
		})
		// A discovery document is read up to sso.MaxProviderBody: a
		// provider cannot make the service buffer without bound.
		t.Run("discovery document too large", func(t *testing.T) {
			var pad atomic.Int64
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/authorize",
					"token_endpoint": srv.URL + "/token", "jwks_uri": srv.URL + "/jwks", "padding": strings.Repeat("x", int(pad.Load()))})
			}))
			defer srv.Close()
			create := func() *testenv.Resp {
				domain := testenv.Domain()
				env.VerifiedDomain(t, f.owner.Token, f.org, domain, "")
				b := body(domain)
				b["issuer"] = srv.URL
				return env.Call(t, "POST", "/v1/orgs/"+f.org+"/sso", f.owner.Token, b)
			}
			pad.Store(sso.MaxProviderBody)
			create().Want(t, 400)
			pad.Store(1000)
			create().Want(t, 200)
		})
	})
}
