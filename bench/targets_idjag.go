package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// idjag is the idjag target's state: an identity provider the bench
// serves (discovery and a JWK Set, an ES256 key), and what each
// assertion names.
type idjag struct {
	idp                               *httptest.Server
	signer                            jose.Signer
	token, client, aud, resource, sub string
	// bodies are request bodies signed before the run, each with its own
	// jti, taken in turn (next), so the bench's ES256 signing does not
	// share the two cores with the server it measures; past the last one
	// a request is signed when it is sent.
	bodies []string
	next   atomic.Int64
}

// idjagSigned is how many assertions the idjag target signs before its
// run: 2,000/s for a 2 s warm-up and a 10 s run is 24,000.
const idjagSigned = 40_000

// idjagTarget measures the JWT-bearer grant with an ID-JAG (issue 27:
// 2,000/s on SQLite): a fresh assertion per request, signed by the bench
// with ES256 before the run, verified against the provider's cached JWK Set, its jti spent
// in the database, the subject mapped through its link, and a session
// and access token bound to the tasks API. The server must reach the
// bench's provider on loopback (GATEHOUSE_WEBHOOK_ALLOW_PRIVATE, set by
// gatehouseEnv). The provider keeps serving until the bench exits.
func idjagTarget() target {
	return newTarget("idjag", setupIDJAG, func(_ int, s *idjag) (*http.Request, error) { return s.request() }, nil)
}

func setupIDJAG(ctx context.Context, e *env) (*idjag, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// The assertion names the issuer and the tool's URL the server knows
	// itself by (its base URL: localhost for a loopback address), not the
	// address the bench dials.
	var md struct {
		Issuer string `json:"issuer"`
	}
	if err := callJSON(ctx, e.client, http.MethodGet, e.baseURL+"/.well-known/oauth-authorization-server", nil, &md); err != nil {
		return nil, err
	}
	s := &idjag{token: e.baseURL + "/oauth/token", aud: md.Issuer, resource: md.Issuer + "/tasks", sub: "bench-" + randomHex(4)}
	if s.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("oauth-id-jag+jwt").WithHeader("kid", "k1")); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	s.idp = httptest.NewServer(mux)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": s.idp.URL, "authorization_endpoint": s.idp.URL + "/authorize",
			"token_endpoint": s.idp.URL + "/token", "jwks_uri": s.idp.URL + "/jwks", "response_types_supported": []string{"code"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"ES256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})

	db, err := openSeedDB(ctx, e.db)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	org, domain, sess, err := ssoOrg(ctx, e, db, "idjag")
	if err != nil {
		return nil, err
	}
	now := nowMicros()
	var conn struct {
		Connection struct {
			ID string `json:"id"`
		} `json:"connection"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org+"/sso", sess.AccessToken, map[string]any{"name": "Bench IdP",
		"issuer": s.idp.URL, "client_id": "bench", "client_secret": "bench-secret", "domains": []string{domain}}, &conn); err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: SSO is not in this build", why)
		}
		return nil, err
	}
	// The bench user is the subject, through a link at the connection.
	if err := db.exec(ctx, `INSERT INTO sso_links (connection_id, subject, user_id, created_at) VALUES ($1, $2, $3, $4)`,
		conn.Connection.ID, s.sub, e.user.session.User.ID, now); err != nil {
		return nil, err
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/oauth/register", "", map[string]any{"client_name": "Bench AI client",
		"redirect_uris": []string{"http://127.0.0.1:9/callback"}}, &reg); err != nil {
		return nil, err
	}
	s.client = reg.ClientID
	policy := map[string]any{"accept": map[string]any{"connections": []string{conn.Connection.ID}, "clients": []string{s.client},
		"resources": []string{s.resource}, "scopes": []string{"tasks:read"}}}
	if err := callAs(ctx, e.client, http.MethodPut, e.baseURL+"/v1/orgs/"+org+"/sso/idjag", sess.AccessToken, policy, nil); err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: ID-JAG is not in this build", why)
		}
		return nil, err
	}
	// One exchange, checked, before the measured ones.
	req, err := s.request()
	if err != nil {
		return nil, err
	}
	resp, err := e.client.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &httpError{method: http.MethodPost, url: s.token, status: resp.StatusCode, body: body}
	}
	s.bodies = make([]string, idjagSigned)
	n := runtime.NumCPU()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			for i := w; i < len(s.bodies) && errs[w] == nil; i += n {
				s.bodies[i], errs[w] = s.body()
			}
		})
	}
	wg.Wait()
	return s, errors.Join(errs...)
}

// body is the form of a JWT-bearer grant with a fresh ID-JAG, valid for
// 10 minutes (the server's longest lifetime).
func (s *idjag) body() (string, error) {
	now := time.Now()
	raw, err := jwt.Signed(s.signer).Claims(map[string]any{"iss": s.idp.URL, "sub": s.sub, "aud": s.aud, "client_id": s.client,
		"resource": s.resource, "scope": "tasks:read", "jti": randomHex(16), "iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}).Serialize()
	if err != nil {
		return "", err
	}
	return url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {raw}, "client_id": {s.client}}.Encode(), nil
}

// request is a JWT-bearer grant with an ID-JAG not sent before.
func (s *idjag) request() (*http.Request, error) {
	var form string
	if i := s.next.Add(1) - 1; i < int64(len(s.bodies)) {
		form = s.bodies[i]
	} else {
		var err error
		if form, err = s.body(); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequest(http.MethodPost, s.token, strings.NewReader(form))
	if err == nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req, err
}

// ssoOrg seeds a team org of the bench user, owner, with a verified
// domain (bench-<kind>-….example), and signs the user in again: creating
// a connection or a policy needs a recent sign-in.
func ssoOrg(ctx context.Context, e *env, db *seedDB, kind string) (org, domain string, sess session, err error) {
	org, domain, now := newUUID(), "bench-"+kind+"-"+randomHex(4)+".example", nowMicros()
	if err = db.insert(ctx, "orgs", orgCols, [][]any{teamOrgRow(org, "Bench "+kind, "bench-"+kind+"-"+randomHex(4), now)}); err != nil {
		return
	}
	if err = db.exec(ctx, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', $3)`, org, e.user.session.User.ID, now); err != nil {
		return
	}
	if err = db.exec(ctx, `INSERT INTO domains (id, org_id, domain, mode, token, verified_at, created_at) VALUES ($1, $2, $3, 'suggest', $4, $5, $5)`,
		newUUID(), org, domain, randomHex(16), now); err != nil {
		return
	}
	sess, err = login(ctx, e.client, e.baseURL, e.user)
	return
}
