package clientmeta

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

func set(t *testing.T, keys ...jose.JSONWebKey) []byte {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseJWKS: only public RS256 (2048 bits or more) and ES256 (P-256)
// signing keys are kept; private or symmetric members, oversized sets,
// too many keys and sets without a usable key are refused.
func TestParseJWKS(t *testing.T) {
	r2048, _ := rsa.GenerateKey(rand.Reader, 2048)
	r1024, _ := rsa.GenerateKey(rand.Reader, 1024)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	good := []jose.JSONWebKey{{Key: &r2048.PublicKey, KeyID: "r", Algorithm: "RS256", Use: "sig"}, {Key: &p256.PublicKey, KeyID: "e"}}
	keys, err := ParseJWKS(set(t, good...))
	if err != nil || len(keys) != 2 || KeyAlg(keys[0]) != "RS256" || KeyAlg(keys[1]) != "ES256" {
		t.Fatalf("good set: %v %v", keys, err)
	}
	// Unusable keys are skipped, not refused, when a usable one remains.
	mixed := append([]jose.JSONWebKey{{Key: &r1024.PublicKey, KeyID: "small"}, {Key: &p384.PublicKey, KeyID: "p384"},
		{Key: &r2048.PublicKey, KeyID: "enc", Use: "enc"}, {Key: &r2048.PublicKey, KeyID: "wrong-alg", Algorithm: "ES256"}}, good[0])
	if keys, err := ParseJWKS(set(t, mixed...)); err != nil || len(keys) != 1 || keys[0].KeyID != "r" {
		t.Fatalf("mixed set: %v %v", keys, err)
	}
	many := make([]jose.JSONWebKey, MaxJWKSKeys+1)
	for i := range many {
		many[i] = good[1]
	}
	for name, raw := range map[string][]byte{
		"private RSA":   set(t, jose.JSONWebKey{Key: r2048, KeyID: "r"}),
		"private EC":    set(t, jose.JSONWebKey{Key: p256, KeyID: "e"}),
		"symmetric":     []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`),
		"only small":    set(t, jose.JSONWebKey{Key: &r1024.PublicKey}),
		"empty":         []byte(`{"keys":[]}`),
		"no keys":       []byte(`{}`),
		"not JSON":      []byte(`{"keys":[`),
		"trailing data": append(set(t, good...), []byte(` {}`)...),
		"too many":      set(t, many...),
		"too big":       []byte(`{"keys":[],"x":"` + strings.Repeat("x", MaxJWKSBytes) + `"}`),
		"bad key":       []byte(`{"keys":[{"kty":"RSA","n":"AA","e":"AQAB","kid":"x"}]}`),
	} {
		if _, err := ParseJWKS(raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestURIs: the allow-lists of redirect, back-channel and JWKS URIs.
func TestURIs(t *testing.T) {
	for _, ok := range []string{"https://a.example/cb", "http://127.0.0.1:8080/cb", "http://localhost/cb", "com.example.app:/cb"} {
		if err := RedirectURI(ok); err != nil {
			t.Errorf("RedirectURI(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"http://a.example/cb", "https://a.example/cb#f", "javascript:alert(1)", "chrome://settings", "/relative", "https://"} {
		if RedirectURI(bad) == nil {
			t.Errorf("RedirectURI(%q) accepted", bad)
		}
	}
	if BackchannelURI("https://rp.example/logout") != nil || BackchannelURI("http://rp.example/logout") == nil {
		t.Errorf("BackchannelURI")
	}
	if JWKSURI("https://rp.example/jwks") != nil || JWKSURI("http://127.0.0.1/jwks") == nil || JWKSURI("https://u:p@rp.example/jwks") == nil {
		t.Errorf("JWKSURI")
	}
	if IDTokenAlg("") != nil || IDTokenAlg("ES256") != nil || IDTokenAlg("HS256") == nil {
		t.Errorf("IDTokenAlg")
	}
}
