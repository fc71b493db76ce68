package token

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// decodedClaims is what encoding/json reads from payload (ok false: it
// refuses it).
func decodedClaims(payload []byte) (c Claims, ok bool) {
	return c, json.Unmarshal(payload, &c) == nil
}

// plain reports whether MarshalJSON writes s as is, the strings
// readClaims reads.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || strings.IndexByte(`"\<>&`, c) >= 0 {
			return false
		}
	}
	return true
}

// TestReadClaimsAsDecoded: every claim set MarshalJSON writes with plain
// strings is read without reflection, as encoding/json reads it (nil and
// empty lists, one audience or several, dates or none); one with a string
// that needed escaping is left to encoding/json.
func TestReadClaimsAsDecoded(t *testing.T) {
	strs := []string{"", "gatehouse", "01a2249a-494d-77a4-ac25-37611f31eb19", "https://auth.example.com", "tasks sign links",
		"a/b:c?d=e;f", `a"b`, `a\b`, "a\nb", "<script>&", "café", "\x7f"}
	eachClaims(strs, func(s string, c Claims) {
		payload, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := readClaims(payload)
		want, _ := decodedClaims(payload)
		if ok != plain(s) {
			t.Fatalf("%s: read without reflection %v; want %v", payload, ok, plain(s))
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", payload, got, want)
		}
	})
}

// TestReadClaimsRefuses: what MarshalJSON does not write, even where
// encoding/json reads it, is left to encoding/json.
func TestReadClaimsRefuses(t *testing.T) {
	c := claimsOf("x", true, []string{Audience}, []string{"tasks"}, []string{"pwd"})
	good, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := readClaims(good); !ok {
		t.Fatalf("%s: not read; want read", good)
	}
	g := string(good)
	for _, tc := range []struct{ what, payload string }{
		{"white space", strings.Replace(g, `"sub":`, `"sub": `, 1)},
		{"an escape", strings.Replace(g, `"sub":"x"`, `"sub":"\u0078"`, 1)},
		{"a member's name in capitals", strings.Replace(g, `"sub":`, `"SUB":`, 1)},
		{"an unknown member", strings.Replace(g, `"sub":"x",`, `"sub":"x","zzz":1,`, 1)},
		{"members in another order", strings.Replace(g, `"iss":"x","sub":"x"`, `"sub":"x","iss":"x"`, 1)},
		{"a member twice", strings.Replace(g, `"jti":"x",`, `"jti":"x","jti":"y",`, 1)},
		{"a fraction of a second", strings.Replace(g, `"nbf":1764288000`, `"nbf":1764288000.5`, 1)},
		{"an exponent", strings.Replace(g, `"nbf":1764288000`, `"nbf":1.764288e9`, 1)},
		{"a leading zero", strings.Replace(g, `"ver":2`, `"ver":02`, 1)},
		{"a negative date", strings.Replace(g, `"nbf":1764288000`, `"nbf":-1`, 1)},
		{"a null amr", strings.Replace(g, `"amr":["pwd"]`, `"amr":null`, 1)},
		{"a null aud", strings.Replace(g, `"aud":"gatehouse"`, `"aud":null`, 1)},
		{"bytes after the object", g + " "},
		{"no org", strings.Replace(g, `"org":{"id":"x","role":"x","tools":["tasks"]},`, "", 1)},
	} {
		if tc.payload == g {
			t.Fatalf("%s: the case changes nothing", tc.what)
		}
		if got, ok := readClaims([]byte(tc.payload)); ok {
			t.Errorf("%s: %s read as %+v; want it left to encoding/json", tc.what, tc.payload, got)
		}
	}
}

// FuzzReadClaims: whatever the bytes, what readClaims reads (if it reads
// them) is what encoding/json reads.
func FuzzReadClaims(f *testing.F) {
	for _, c := range []Claims{
		claimsOf("x", true, []string{Audience}, []string{"tasks"}, []string{"pwd"}),
		claimsOf("01a2249a-494d-77a4-ac25-37611f31eb19", false, []string{Audience, "https://mcp.example.com"}, nil, nil),
		claimsOf("", true, nil, []string{}, []string{"pwd", "otp"}),
	} {
		b, _ := c.MarshalJSON()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		got, ok := readClaims(payload)
		if !ok {
			return
		}
		want, wok := decodedClaims(payload)
		if !wok {
			t.Fatalf("%q: read as %+v; encoding/json refuses it", payload, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", payload, got, want)
		}
	})
}

// TestReadClaimsFinerPrecision: with the JWT library set to write
// fractions of a second, the dates are left to it.
func TestReadClaimsFinerPrecision(t *testing.T) {
	defer func(p time.Duration) { jwt.TimePrecision = p }(jwt.TimePrecision)
	c := claimsOf("x", true, []string{Audience}, nil, nil)
	payload, _ := c.MarshalJSON()
	jwt.TimePrecision = time.Millisecond
	if _, ok := readClaims(payload); ok {
		t.Error("read without reflection at millisecond precision; want it left to encoding/json")
	}
}

func BenchmarkReadClaims(b *testing.B) {
	c := claimsOf("01a2249a-494d-77a4-ac25-37611f31eb19", true, []string{Audience}, []string{"tasks", "sign"}, []string{"pwd"})
	payload, _ := c.MarshalJSON()
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			readClaims(payload)
		}
	})
	b.Run("reflect", func(b *testing.B) {
		for b.Loop() {
			decodedClaims(payload)
		}
	})
}
