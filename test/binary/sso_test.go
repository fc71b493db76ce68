package binary

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// walkSSO checks the SSO module is wired in the binary as shipped (issue
// 27), nothing injected: a team's connections list, home-realm discovery
// of an address no connection serves, and a connection whose issuer's
// discovery document is read (a loopback provider: the tests allow
// private addresses) but whose domain the workspace has not verified.
func walkSSO(t *testing.T, s *server, orgToken, orgID string) {
	var idp *httptest.Server
	idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": idp.URL, "authorization_endpoint": idp.URL + "/authorize",
			"token_endpoint": idp.URL + "/token", "jwks_uri": idp.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"}})
	}))
	t.Cleanup(idp.Close)
	if r := s.do(t, "GET", "/v1/orgs/"+orgID+"/sso", orgToken, nil, 200); !strings.Contains(string(r.Body), `"connections":[]`) {
		t.Errorf("connections = %s; want none", r.Body)
	}
	s.do(t, "POST", "/v1/sso/discover", "", map[string]string{"email": "ann@nowhere.example"}, 404)
	r := s.do(t, "POST", "/v1/orgs/"+orgID+"/sso", orgToken, map[string]any{"issuer": idp.URL, "client_id": "c", "client_secret": "s",
		"domains": []string{"unverified.example"}}, 400)
	if !strings.Contains(r.Str("error"), "not a verified domain") {
		t.Errorf("create answered %s; want the unverified domain named", r.Body)
	}
}
