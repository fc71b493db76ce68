package token

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestAudience: a lone audience is written as the string "gatehouse"
// (CONTRACT §4), resources make it an array, both verify, and the JWT
// library's global stays as the library set it.
func TestAudience(t *testing.T) {
	now := time.Now()
	s, err := NewSigner([]byte(strings.Repeat("k", 32)), "https://issuer.test", func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		resources []string
		want      any
	}{
		{"alone", nil, "gatehouse"},
		{"with a resource", []string{"https://api.test/tasks"}, []any{"gatehouse", "https://api.test/tasks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _, err := s.Issue(Claims{RegisteredClaims: jwt.RegisteredClaims{Audience: tc.resources}, Org: OrgClaim{ID: "o"}, Via: "password"}, "u", now, time.Minute)
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
			c, err := s.Verify(raw)
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
	s, err := NewSigner(key, "https://issuer.test", func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := s.Issue(Claims{RegisteredClaims: jwt.RegisteredClaims{Audience: []string{"https://api.test/tasks"}}, Org: OrgClaim{ID: "o"},
		Via: "password", MFA: MFAPending}, "u", now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwt.NewParser(jwt.WithAudience(Audience)).Parse(raw, func(*jwt.Token) (any, error) { return key, nil }); err == nil {
		t.Errorf("a verifier expecting aud %q accepts the pending token", Audience)
	}
	c, err := s.Verify(raw)
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
	if c, err := s.Verify(signed); err != nil || c.MFA != MFAPending {
		t.Errorf("Verify of aud %s without mfa = %+v, %v; want it read as pending", PendingAudience, c, err)
	}
}
