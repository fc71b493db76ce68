package oauth_test

import (
	"crypto/x509"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// resolveClient makes the token endpoint resolve clientID from ip: 400
// invalid_grant when the client is known (the code is made up), 401
// invalid_client when not, 429 when its document may not be fetched now.
func resolveClient(t *testing.T, env *testenv.Env, ip, clientID string) *testenv.Page {
	t.Helper()
	return env.NewBrowser(t).From(t, ip).Post(t, "/oauth/token", url.Values{"grant_type": {"authorization_code"},
		"code": {"made-up"}, "client_id": {clientID}, "redirect_uri": {redirect}, "code_verifier": {oauth2.GenerateVerifier()}})
}

func description(t *testing.T, p *testenv.Page) string {
	t.Helper()
	var body struct {
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal([]byte(p.Body), &body); err != nil || body.Description == "" {
		t.Fatalf("not an OAuth error: %d %s", p.Status, p.Body)
	}
	return body.Description
}

func metadataRoots(h *metadataHost) *x509.CertPool {
	roots := x509.NewCertPool()
	roots.AddCert(h.srv.Certificate())
	return roots
}

// TestClientIDMetadataFailures: every failed fetch gets one generic answer
// that tells nothing of what the remote host said, and is remembered for a
// minute, so probing a host does not fetch from it each time.
func TestClientIDMetadataFailures(t *testing.T) {
	host := newMetadataHost(t)
	testenv.RunWith(t, testenv.Options{RootCAs: metadataRoots(host), AllowPrivate: true}, func(t *testing.T, env *testenv.Env) {
		var first string
		for _, id := range []string{host.srv.URL + "/missing.json", host.srv.URL + "/mismatch.json", host.srv.URL + "/huge.json",
			host.srv.URL + "/chrome.json", "https://127.0.0.1:1/client.json"} {
			p := resolveClient(t, env, "127.0.0.1", id)
			d := description(t, p)
			if p.Status != 401 || strings.Contains(d, "404") || strings.Contains(d, "HTTP") || strings.Contains(d, "refused") {
				t.Fatalf("%s: %d %s; want 401 invalid_client without the remote answer", id, p.Status, p.Body)
			}
			if first == "" {
				first = d
			} else if d != first {
				t.Fatalf("%s: error_description %q; want the same as for the others, %q", id, d, first)
			}
		}
		missing := host.srv.URL + "/missing.json"
		n := host.fetches.Load()
		if p := resolveClient(t, env, "127.0.0.1", missing); p.Status != 401 || host.fetches.Load() != n {
			t.Fatalf("failure again within a minute: %d after %d fetches; want 401 from the cache", p.Status, host.fetches.Load()-n)
		}
		env.Clock.Advance(61 * time.Second)
		if resolveClient(t, env, "127.0.0.1", missing); host.fetches.Load() != n+1 {
			t.Fatalf("after a minute: %d fetches; want the document fetched again", host.fetches.Load()-n)
		}
	})
}

// TestClientIDMetadataFetchLimits: with abuse limits on, fetches (cache
// misses) are limited per requester IP (10, then one per 6 s) and per
// document host (30, then one per 2 s).
func TestClientIDMetadataFetchLimits(t *testing.T) {
	host := newMetadataHost(t)
	testenv.RunWith(t, testenv.Options{RootCAs: metadataRoots(host), AllowPrivate: true, RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		doc := func(i int) string { return host.srv.URL + "/client-" + strconv.Itoa(i) + ".json" }
		want := func(name string, p *testenv.Page, status int) {
			t.Helper()
			if p.Status != status || status == 429 && p.Header.Get("Retry-After") == "" {
				t.Fatalf("%s: %d %s (Retry-After %q); want %d", name, p.Status, p.Body, p.Header.Get("Retry-After"), status)
			}
		}
		next := 0
		for ip := 1; ip <= 3; ip++ {
			addr := "127.0.0." + strconv.Itoa(ip)
			for range 10 {
				next++
				want("fetch "+strconv.Itoa(next), resolveClient(t, env, addr, doc(next)), 400)
			}
			if ip == 1 {
				want("11th fetch from one IP", resolveClient(t, env, addr, doc(100)), 429)
				want("a cached document from that IP", resolveClient(t, env, addr, doc(1)), 400)
				b := env.NewBrowser(t)
				p := b.Get(t, oauthConfig(env, doc(100)).AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
				want("the authorization page from that IP", p, 429)
			}
		}
		want("31st fetch from one host", resolveClient(t, env, "127.0.0.4", doc(100)), 429)
		env.Clock.Advance(2 * time.Second)
		want("a fetch after the host's Retry-After", resolveClient(t, env, "127.0.0.4", doc(100)), 400)
	})
}
