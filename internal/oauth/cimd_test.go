package oauth_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// metadataHost serves client ID metadata documents over TLS and counts
// fetches.
type metadataHost struct {
	srv     *httptest.Server
	fetches atomic.Int32
}

func newMetadataHost(t *testing.T) *metadataHost {
	h := &metadataHost{}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fetches.Add(1)
		self := h.srv.URL + r.URL.Path
		doc := map[string]any{"client_id": self, "client_name": "Doc Client", "redirect_uris": []string{redirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"}
		switch r.URL.Path {
		case "/cached.json":
			w.Header().Set("Cache-Control", "max-age=300")
		case "/nostore.json":
			w.Header().Set("Cache-Control", "no-store")
		case "/mismatch.json":
			doc["client_id"] = h.srv.URL + "/other.json"
		case "/secret.json":
			doc["token_endpoint_auth_method"] = "client_secret_basic"
		case "/chrome.json":
			doc["redirect_uris"] = []string{redirect, "chrome://settings/passwords"}
		case "/huge.json":
			doc["client_name"] = strings.Repeat("x", 70<<10)
		case "/missing.json":
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// TestClientIDMetadataDocuments: an https client_id is resolved by fetching
// its document (TLS, bounded, cached per Cache-Control), and the flow then
// works as for a registered client.
func TestClientIDMetadataDocuments(t *testing.T) {
	host := newMetadataHost(t)
	// The host's certificate is trusted the way GATEHOUSE_WEBHOOK_CA_FILE
	// makes it: as an extra root CA.
	roots := x509.NewCertPool()
	roots.AddCert(host.srv.Certificate())
	testenv.RunWith(t, testenv.Options{RootCAs: roots, AllowPrivate: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		clientID := host.srv.URL + "/cached.json"
		cfg := oauthConfig(env, clientID)
		verifier := oauth2.GenerateVerifier()
		authURL := cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
		page := b.Get(t, authURL)
		if page.Status != 200 || !strings.Contains(page.Body, "Doc Client from 127.0.0.1") {
			t.Fatalf("consent: %d %s", page.Status, page.Body)
		}
		before := host.fetches.Load()
		back := consentAt(t, b, authURL, a.OrgID)
		// Basic auth carries the URL client_id query-escaped (x/oauth2).
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, env.Client)
		tok, err := cfg.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		if testenv.Claims(t, tok.AccessToken)["via"] != "oauth" {
			t.Fatalf("token = %v", testenv.Claims(t, tok.AccessToken))
		}
		if host.fetches.Load() != before {
			t.Fatalf("a max-age=300 document was fetched again (%d -> %d)", before, host.fetches.Load())
		}
		grants := env.Do(t, "GET", "/v1/me/grants", a.Access, nil).Want(t, 200)
		if !strings.Contains(string(grants.Body), clientID) {
			t.Fatalf("grants = %s", grants.Body)
		}

		noStore := host.srv.URL + "/nostore.json"
		n := host.fetches.Load()
		b.Get(t, oauthConfig(env, noStore).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
		b.Get(t, oauthConfig(env, noStore).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
		if host.fetches.Load()-n != 2 {
			t.Fatalf("a no-store document was cached")
		}

		for _, bad := range []string{"/mismatch.json", "/secret.json", "/chrome.json", "/huge.json", "/missing.json"} {
			p := b.Get(t, oauthConfig(env, host.srv.URL+bad).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
			if p.Status != 400 || p.Location() != "" {
				t.Fatalf("%s: status %d location %q; want the error page", bad, p.Status, p.Location())
			}
		}
		for _, bad := range []string{"http://127.0.0.1/client.json", host.srv.URL, host.srv.URL + "/a/../client.json"} {
			if p := b.Get(t, oauthConfig(env, bad).AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))); p.Status != 400 {
				t.Fatalf("client_id %s: status %d; want the error page", bad, p.Status)
			}
		}
	})
}

// TestClientIDMetadataPrivateAddress: without GATEHOUSE_WEBHOOK_ALLOW_PRIVATE
// a document on a loopback address is not fetched.
func TestClientIDMetadataPrivateAddress(t *testing.T) {
	host := newMetadataHost(t)
	testenv.RunWith(t, testenv.Options{MetadataClient: host.srv.Client()}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		b := env.NewBrowser(t)
		signIn(t, b, a)
		p := b.Get(t, oauthConfig(env, host.srv.URL+"/cached.json").AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		if p.Status != 400 || host.fetches.Load() != 0 {
			t.Fatalf("status %d after %d fetches; want a refusal without fetching", p.Status, host.fetches.Load())
		}
	})
}
