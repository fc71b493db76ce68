package testenv

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/keys"
	"github.com/gatehouse/gatehouse/internal/token"
)

// JWTSecret is the HS256 key New gives the token signer. Tests that forge
// tokens sign with it; their control case (the unchanged claims re-signed
// answer 200) fails if the two ever drift apart.
const JWTSecret = "test-secret-test-secret-test-secret!"

// decodeJWT splits a compact JWS into its decoded header and claims
// without checking the signature.
func decodeJWT(t testing.TB, jwt string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q has %d parts; want 3 (header.payload.signature)", jwt, len(parts))
	}
	decode := func(what, s string) map[string]any {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("access token %s is not base64url: %v", what, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("access token %s %s is not a JSON object: %v", what, b, err)
		}
		return m
	}
	return decode("header", parts[0]), decode("payload", parts[1])
}

// Claims returns the claims of an access token, unchecked.
func Claims(t testing.TB, jwt string) map[string]any {
	t.Helper()
	_, c := decodeJWT(t, jwt)
	return c
}

// Header returns the JOSE header of an access token.
func Header(t testing.TB, jwt string) map[string]any {
	t.Helper()
	h, _ := decodeJWT(t, jwt)
	return h
}

// SID returns the session id (sid claim) of an access token, failing when
// it has none.
func SID(t testing.TB, jwt string) string {
	t.Helper()
	c := Claims(t, jwt)
	sid, _ := c["sid"].(string)
	if sid == "" {
		t.Fatalf("access token has no sid claim: %v", c)
	}
	return sid
}

// TokenOrg returns the org claim of an access token: id, role, tools.
func TokenOrg(t testing.TB, jwt string) (id, role string, tools []string) {
	t.Helper()
	c := Claims(t, jwt)
	org, _ := c["org"].(map[string]any)
	if org == nil {
		t.Fatalf("access token claims %v have no org object", c)
	}
	id, _ = org["id"].(string)
	role, _ = org["role"].(string)
	return id, role, Strings(org["tools"])
}

// ForgeJWT encodes header and claims and signs them with alg ("none",
// "HS256" or "HS512") under key.
func ForgeJWT(t testing.TB, header, claims map[string]any, alg string, key []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(claims)
	var sum []byte
	switch alg {
	case "none":
		return input + "."
	case "HS256":
		m := hmac.New(sha256.New, key)
		m.Write([]byte(input))
		sum = m.Sum(nil)
	case "HS512":
		m := hmac.New(sha512.New, key)
		m.Write([]byte(input))
		sum = m.Sum(nil)
	default:
		t.Fatalf("ForgeJWT: unknown alg %q", alg)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sum)
}

// ForgeToken signs claims c with the test key for the subject and issuer
// of the real token like, valid for an hour from the env's clock.
func (e *Env) ForgeToken(t testing.TB, like string, c token.Claims) string {
	t.Helper()
	real := Claims(t, like)
	iss, _ := real["iss"].(string)
	sub, _ := real["sub"].(string)
	s, err := keys.NewSecret([]byte(JWTSecret))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := token.Issue(context.Background(), s, iss, c, sub, e.Clock.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// ForgeKeyToken forges an access token as a key exchange would mint it
// (via api_key, no session) for the user of the real token like, scoped to
// orgID with role.
func (e *Env) ForgeKeyToken(t testing.TB, like, orgID, role string) string {
	t.Helper()
	return e.ForgeToken(t, like, token.Claims{Via: "api_key", Org: token.OrgClaim{ID: orgID, Role: role}})
}
