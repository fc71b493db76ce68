package token

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/gatehouse/gatehouse/internal/keys"
)

// TestAudience: a lone audience is written as the string "gatehouse"
// (CONTRACT §4), resources make it an array, both verify, and the JWT
// library's global stays as the library set it.
func TestAudience(t *testing.T) {
	now := time.Now()
	s := secret(t, strings.Repeat("k", 32))
	for _, tc := range []struct {
		name      string
		resources []string
		want      any
	}{
		{"alone", nil, "gatehouse"},
		{"with a resource", []string{"https://api.test/tasks"}, []any{"gatehouse", "https://api.test/tasks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _, err := Issue(ctx, s, iss, Claims{RegisteredClaims: jwt.RegisteredClaims{Audience: tc.resources}, Org: OrgClaim{ID: "o"}, Via: "password"}, "u", now, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[1])
			var m map[string]any
			if err := json.Unmarshal(payload, &m); err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(m["aud"]); string(got) != mustJSON(tc.want) {
				t.Errorf("aud = %s; want %s", got, mustJSON(tc.want))
			}
			c, err := Verify(ctx, s, iss, now, raw)
			if err != nil || c.Subject != "u" || c.Org.ID != "o" || c.Audience[0] != Audience {
				t.Errorf("Verify = %+v, %v; want the claims back", c, err)
			}
		})
	}
	if !jwt.MarshalSingleStringAsArray {
		t.Errorf("jwt.MarshalSingleStringAsArray = false; want the library's default left alone")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPendingAudience: a token owing its second factor has the audience
// "gatehouse:mfa" alone, resources dropped, so a verifier expecting
// "gatehouse" refuses it; Verify accepts it and reads a token of that
// audience as pending even without the mfa claim.
func TestPendingAudience(t *testing.T) {
	now := time.Now()
	key := []byte(strings.Repeat("k", 32))
	s := secret(t, string(key))
	raw, _, err := Issue(ctx, s, iss, Claims{RegisteredClaims: jwt.RegisteredClaims{Audience: []string{"https://api.test/tasks"}}, Org: OrgClaim{ID: "o"},
		Via: "password", MFA: MFAPending}, "u", now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwt.NewParser(jwt.WithAudience(Audience)).Parse(raw, func(*jwt.Token) (any, error) { return key, nil }); err == nil {
		t.Errorf("a verifier expecting aud %q accepts the pending token", Audience)
	}
	c, err := Verify(ctx, s, iss, now, raw)
	if err != nil || c.MFA != MFAPending || len(c.Audience) != 1 || c.Audience[0] != PendingAudience {
		t.Fatalf("Verify = %+v, %v; want a pending token of audience %s only", c, err, PendingAudience)
	}
	// Signed by hand without the mfa claim: still pending.
	bare := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "https://issuer.test", "sub": "u", "aud": PendingAudience,
		"exp": now.Add(time.Minute).Unix(), "org": map[string]any{"id": "o"}, "via": "password", "ver": Version})
	signed, err := bare.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := Verify(ctx, s, iss, now, signed); err != nil || c.MFA != MFAPending {
		t.Errorf("Verify of aud %s without mfa = %+v, %v; want it read as pending", PendingAudience, c, err)
	}
}

var ctx = context.Background()

const iss = "https://issuer.test"

// secret returns the HS256 signer of key.
func secret(t *testing.T, key string) *keys.Secret {
	t.Helper()
	s, err := keys.NewSecret([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFormatUnchanged: an access token issued through the seam is the
// HS256 JWT of spec section 5 (the header's bytes as before but the kid, verified by a
// plain JWT library holding the secret), and a token that library signs
// with the secret verifies here.
func TestFormatUnchanged(t *testing.T) {
	now := time.Now()
	key := strings.Repeat("k", 32)
	s := secret(t, key)
	raw, exp, err := Issue(ctx, s, iss, Claims{Org: OrgClaim{ID: "o", Role: "owner"}, Via: "password", SessionID: "sid"}, "u", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"alg":"HS256","kid":"` + keys.SecretKID([]byte(key)) + `","typ":"JWT"}`
	if head, _, _ := strings.Cut(raw, "."); head != base64.RawURLEncoding.EncodeToString([]byte(want)) {
		t.Errorf("header %q; want %s: as before, with the secret's kid (issue 29 item 6)", head, want)
	}
	var c Claims
	if _, err := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithAudience(Audience), jwt.WithIssuer(iss)).
		ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return []byte(key), nil }); err != nil {
		t.Fatalf("a JWT library holding the secret refuses the token: %v", err)
	}
	if c.Subject != "u" || c.SessionID != "sid" || c.Org.Role != "owner" || c.Ver != Version || !c.ExpiresAt.Time.Equal(exp) {
		t.Errorf("claims read by the library = %+v; want the issued ones", c)
	}
	theirs, err := jwt.NewWithClaims(jwt.SigningMethodHS256, &c).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Verify(ctx, s, iss, now, theirs); err != nil || got.Subject != "u" || got.Org.ID != "o" {
		t.Errorf("Verify of the library's token = %+v, %v; want its claims", got, err)
	}
}

// rs256 is a Signer of one RSA key, standing in for the key ring.
type rs256 struct{ key *rsa.PrivateKey }

func (r rs256) Sign(_ context.Context, alg string, payload []byte) (string, error) {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: r.key}, nil)
	if err != nil {
		return "", err
	}
	jws, err := s.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func (r rs256) Verify(_ context.Context, alg, raw string) ([]byte, error) {
	obj, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, err
	}
	return obj.Verify(&r.key.PublicKey)
}

func (r rs256) PublicKeys(context.Context) (jose.JSONWebKeySet, error) {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &r.key.PublicKey, Algorithm: "RS256", Use: "sig"}}}, nil
}

func (r rs256) Algorithms() []string { return []string{keys.RS256} }

// TestVerifyRefuses: each way a token fails, refused. Among them the
// attacks on the seam: a token the ring signed (an ID token, RS256) with
// every claim of an access token is still not one; a header naming
// another algorithm ("none", HS512) or a token signed with another key;
// and the claims' own bounds (expiry at its second, issuer, audience).
func TestVerifyRefuses(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	key := strings.Repeat("k", 32)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := keys.Join(secret(t, key), rs256{rk})
	good := func(mod func(m jwt.MapClaims)) jwt.MapClaims {
		m := jwt.MapClaims{"iss": iss, "sub": "u", "aud": Audience, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
			"org": map[string]any{"id": "o", "role": "owner", "tools": []string{}}, "via": "password", "ver": Version}
		if mod != nil {
			mod(m)
		}
		return m
	}
	hs := func(method jwt.SigningMethod, k any, m jwt.MapClaims) string {
		raw, err := jwt.NewWithClaims(method, m).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	payload, _ := json.Marshal(good(nil))
	idToken, err := s.Sign(ctx, keys.RS256, payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, s, iss, now, hs(jwt.SigningMethodHS256, []byte(key), good(nil))); err != nil {
		t.Fatalf("control: a good token refused: %v", err)
	}
	if _, err := s.Verify(ctx, keys.RS256, idToken); err != nil {
		t.Fatalf("control: the ring's token does not verify as RS256: %v", err)
	}
	body := strings.Split(hs(jwt.SigningMethodHS256, []byte(key), good(nil)), ".")[1]
	for _, tc := range []struct{ name, raw string }{
		{"signed by the ring (RS256)", idToken},
		{"alg none", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + body + "."},
		{"HS512 with the secret", hs(jwt.SigningMethodHS512, []byte(key+key), good(nil))},
		{"another key", hs(jwt.SigningMethodHS256, []byte(strings.Repeat("x", 32)), good(nil))},
		{"tampered claims", strings.Replace(hs(jwt.SigningMethodHS256, []byte(key), good(nil)), body, base64.RawURLEncoding.EncodeToString(
			[]byte(strings.Replace(string(mustDecode(body)), `"owner"`, `"admin"`, 1))), 1)},
		{"expired at its second", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { m["exp"] = now.Unix() }))},
		{"no exp", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { delete(m, "exp") }))},
		{"not valid yet", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { m["nbf"] = now.Add(time.Second).Unix() }))},
		{"another issuer", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { m["iss"] = "https://evil.test" }))},
		{"no issuer", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { delete(m, "iss") }))},
		{"another audience", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { m["aud"] = "client-1" }))},
		{"no audience", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { delete(m, "aud") }))},
		{"claims v1", hs(jwt.SigningMethodHS256, []byte(key), good(func(m jwt.MapClaims) { m["ver"] = 1 }))},
		{"two segments", strings.Join(strings.Split(hs(jwt.SigningMethodHS256, []byte(key), good(nil)), ".")[:2], ".")},
		{"four segments", hs(jwt.SigningMethodHS256, []byte(key), good(nil)) + ".x"},
		{"not base64", "!!.!!.!!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := Verify(ctx, s, iss, now, tc.raw); err == nil {
				t.Errorf("Verify = %+v; want it refused", c)
			}
		})
	}
	// Just inside expiry: accepted.
	if _, err := Verify(ctx, s, iss, now.Add(time.Hour-time.Nanosecond), hs(jwt.SigningMethodHS256, []byte(key), good(nil))); err != nil {
		t.Errorf("a token a nanosecond before its exp refused: %v", err)
	}
}

func mustDecode(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkVerify is the hot path of every authenticated request.
func BenchmarkVerify(b *testing.B) {
	hs, _ := keys.NewSecret([]byte(strings.Repeat("k", 32)))
	s, now := keys.Join(hs), time.Now()
	raw, _, _ := Issue(ctx, s, iss, Claims{Org: OrgClaim{ID: "o", Role: "owner", Tools: []string{"tasks", "links"}}, Via: "password",
		SessionID: "0190a0b0-0000-7000-8000-000000000000", AAL: "aal1", AMR: []string{"pwd"}}, "u", now, time.Hour)
	for b.Loop() {
		if _, err := Verify(ctx, s, iss, now, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssue is an access token's minting, on every sign-in and
// refresh.
func BenchmarkIssue(b *testing.B) {
	hs, _ := keys.NewSecret([]byte(strings.Repeat("k", 32)))
	s, now := keys.Join(hs), time.Now()
	c := Claims{Org: OrgClaim{ID: "o", Role: "owner", Tools: []string{"tasks", "links"}}, Via: "password",
		SessionID: "0190a0b0-0000-7000-8000-000000000000", AAL: "aal1", AMR: []string{"pwd"}}
	for b.Loop() {
		if _, _, err := Issue(ctx, s, iss, c, "u", now, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}
