package token

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// reflectedClaims is what encoding/json writes for c, the way MarshalJSON
// wrote the claims before it wrote them itself.
func reflectedClaims(t testing.TB, c Claims) []byte {
	t.Helper()
	var aud any
	switch len(c.Audience) {
	case 0:
	case 1:
		aud = c.Audience[0]
	default:
		aud = []string(c.Audience)
	}
	r := c.RegisteredClaims
	b, err := json.Marshal(struct {
		Issuer    string           `json:"iss,omitempty"`
		Subject   string           `json:"sub,omitempty"`
		Audience  any              `json:"aud,omitempty"`
		ExpiresAt *jwt.NumericDate `json:"exp,omitempty"`
		NotBefore *jwt.NumericDate `json:"nbf,omitempty"`
		IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
		ID        string           `json:"jti,omitempty"`
		SessionID string           `json:"sid,omitempty"`
		KeyID     string           `json:"key_id,omitempty"`
		Org       OrgClaim         `json:"org"`
		Via       string           `json:"via"`
		Ver       int              `json:"ver"`
		AAL       string           `json:"aal,omitempty"`
		AMR       []string         `json:"amr,omitempty"`
		MFA       string           `json:"mfa,omitempty"`
		Scope     string           `json:"scope,omitempty"`
	}{r.Issuer, r.Subject, aud, r.ExpiresAt, r.NotBefore, r.IssuedAt, r.ID, c.SessionID, c.KeyID, c.Org, c.Via, c.Ver, c.AAL, c.AMR, c.MFA, c.Scope})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// claimsOf builds claims whose every string is s (and the lists hold it),
// with dates when dated.
func claimsOf(s string, dated bool, aud []string, tools, amr []string) Claims {
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: s, Subject: s, Audience: aud, ID: s},
		SessionID:        s, KeyID: s, Via: s, Ver: Version, AAL: s, AMR: amr, MFA: s, Scope: s,
		Org: OrgClaim{ID: s, Role: s, Tools: tools},
	}
	if dated {
		now := time.Unix(1764288000, 0)
		c.ExpiresAt, c.NotBefore, c.IssuedAt = jwt.NewNumericDate(now.Add(time.Hour)), jwt.NewNumericDate(now), jwt.NewNumericDate(now)
	}
	return c
}

// TestClaimsJSONAsReflected: the claims written by hand are byte for byte
// what encoding/json writes for them: members left out when empty as
// omitempty leaves them, one audience a string and several an array, nil
// tools null, and strings that need escaping (quotes, backslashes, control
// characters, HTML's <>&, non-ASCII, invalid UTF-8, U+2028) escaped alike.
func TestClaimsJSONAsReflected(t *testing.T) {
	strs := []string{"", "gatehouse", "01a2249a-494d-77a4-ac25-37611f31eb19", `a"b`, `a\b`, "a\nb\tc\x00", "<script>&", "café ☕", "\xff\xfe", "a\u2028b", "tasks sign links"}
	eachClaims(strs, func(s string, c Claims) {
		got, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := reflectedClaims(t, c); !bytes.Equal(got, want) {
			t.Fatalf("claims of %q:\n got %s\nwant %s", s, got, want)
		}
	})
}

// eachClaims calls fn with the claims of each of strs (claimsOf), with
// dates and without, no audience, one or two, and nil, empty, one- and
// two-item lists.
func eachClaims(strs []string, fn func(s string, c Claims)) {
	for _, s := range strs {
		for _, dated := range []bool{false, true} {
			for _, aud := range [][]string{nil, {Audience}, {Audience, "https://mcp.example.com/" + s}} {
				for _, lists := range [][]string{nil, {}, {s}, {"tasks", s}} {
					fn(s, claimsOf(s, dated, aud, lists, lists))
				}
			}
		}
	}
}

// FuzzClaimsJSON: for any strings the hand-written claims equal
// encoding/json's, and parse.
func FuzzClaimsJSON(f *testing.F) {
	for _, s := range []string{"", "x", `"\`, "<>&", "\x7f\x1f", "é", "\xc3"} {
		f.Add(s, s+"1", true)
	}
	f.Fuzz(func(t *testing.T, s, u string, dated bool) {
		c := claimsOf(s, dated, []string{Audience, u}, []string{u, s}, []string{s})
		c.Org.ID, c.Subject = u, u
		got, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := reflectedClaims(t, c); !bytes.Equal(got, want) {
			t.Fatalf("got %s\nwant %s", got, want)
		}
		var back Claims
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
	})
}

// TestClaimsJSONFinerPrecision: with the JWT library set to write
// fractions of a second, the dates are its own.
func TestClaimsJSONFinerPrecision(t *testing.T) {
	defer func(p time.Duration) { jwt.TimePrecision = p }(jwt.TimePrecision)
	jwt.TimePrecision = time.Millisecond
	c := claimsOf("x", true, []string{Audience}, nil, nil)
	c.IssuedAt = jwt.NewNumericDate(time.Unix(1764288000, 123456789))
	got, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := reflectedClaims(t, c); !bytes.Equal(got, want) || !bytes.Contains(got, []byte(`"iat":1764288000.123`)) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func BenchmarkClaimsJSON(b *testing.B) {
	c := claimsOf("01a2249a-494d-77a4-ac25-37611f31eb19", true, []string{Audience}, []string{"tasks", "sign"}, []string{"pwd"})
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			c.MarshalJSON()
		}
	})
	b.Run("reflect", func(b *testing.B) {
		for b.Loop() {
			reflectedClaims(b, c)
		}
	})
}
