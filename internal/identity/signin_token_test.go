package identity_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

func TestSigninAccessTokenClaims(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		r := env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": testenv.Email(), "password": "password-1"}).Want(t, 200)
		header, c := testenv.Header(t, r.Str("access_token")), testenv.Claims(t, r.Str("access_token"))
		if header["alg"] != "HS256" {
			t.Errorf("header alg = %v; want HS256", header["alg"])
		}
		if iss, _ := c["iss"].(string); iss == "" {
			t.Errorf("claims iss = %v; want the issuer", c["iss"])
		}
		if c["sub"] != r.Str("user.id") {
			t.Errorf("claims sub = %v; want user id %s", c["sub"], r.Str("user.id"))
		}
		if c["aud"] != "gatehouse" {
			t.Errorf("claims aud = %#v; want the string gatehouse (CONTRACT §4)", c["aud"])
		}
		exp, _ := c["exp"].(float64)
		iat, _ := c["iat"].(float64)
		if exp-iat != 3600 {
			t.Errorf("claims exp-iat = %v; want 3600", exp-iat)
		}
		if now := float64(env.Clock.Now().Unix()); iat < now-1 || iat > now+1 {
			t.Errorf("claims iat = %v; want the service clock %v", iat, now)
		}
		if want, _ := time.Parse(time.RFC3339, r.Str("expires_at")); int64(exp) != want.Unix() {
			t.Errorf("claims exp = %v; want expires_at %s (%d)", exp, r.Str("expires_at"), want.Unix())
		}
		for _, k := range []string{"jti", "sid"} {
			if s, _ := c[k].(string); s == "" {
				t.Errorf("claims %s = %v; want a non-empty string", k, c[k])
			}
		}
		if c["via"] != "password" {
			t.Errorf("claims via = %v; want password", c["via"])
		}
		if c["ver"] != float64(2) {
			t.Errorf("claims ver = %v; want 2", c["ver"])
		}
		org, _ := c["org"].(map[string]any)
		if org["id"] != r.Str("org.id") || org["role"] != "owner" {
			t.Errorf("claims org = %v; want {id %s, role owner, tools}", c["org"], r.Str("org.id"))
		}
		if got := testenv.Strings(org["tools"]); strings.Join(got, ",") != strings.Join(workspace.Tools, ",") {
			t.Errorf("claims org.tools = %v; want %v", org["tools"], workspace.Tools)
		}
		second := env.Login(t, r.Str("user.email"), "password-1").Want(t, 200)
		if c2 := testenv.Claims(t, second.Str("access_token")); c2["jti"] == c["jti"] {
			t.Errorf("two tokens share jti %v; want a fresh one per token", c["jti"])
		}
	})
}

func TestSigninForgedTokens(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		header, claims := testenv.Header(t, a.Access), testenv.Claims(t, a.Access)
		key := []byte(testenv.JWTSecret)
		with := func(k string, v any) map[string]any {
			c := maps.Clone(claims)
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
			return c
		}
		alg := func(name string) map[string]any {
			h := maps.Clone(header)
			h["alg"] = name
			return h
		}
		parts := strings.Split(a.Access, ".")
		// Flip one character in the middle of the signature (the last one may
		// only carry padding bits).
		sig := []byte(parts[2])
		if sig[10] == 'A' {
			sig[10] = 'B'
		} else {
			sig[10] = 'A'
		}
		tamperedSig := parts[0] + "." + parts[1] + "." + string(sig)
		adminClaims := with("org", map[string]any{"id": a.OrgID, "role": "admin", "tools": claims["org"].(map[string]any)["tools"]})
		// The unsigned form ends in "."; append the original signature.
		tamperedPayload := testenv.ForgeJWT(t, header, adminClaims, "none", nil) + parts[2]
		future := float64(env.Clock.Now().Add(time.Hour).Unix())

		const path = "/v1/auth/me"
		env.RunCases(t, []testenv.Case{
			{Name: "control: same claims re-signed with HS256 and the key", Method: "GET", Path: path, Want: 200,
				Token: testenv.ForgeJWT(t, header, claims, "HS256", key)},
			{Name: "alg none", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, alg("none"), claims, "none", nil)},
			{Name: "alg none with upper case", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, alg("NONE"), claims, "none", nil)},
			{Name: "alg HS512 with the same key", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, alg("HS512"), claims, "HS512", key)},
			{Name: "header says HS512, signed HS256", Method: "GET", Path: path, Want: 401,
				Token: testenv.ForgeJWT(t, alg("HS512"), claims, "HS256", key)},
			{Name: "tampered signature", Method: "GET", Path: path, Want: 401, Token: tamperedSig},
			{Name: "tampered payload with the original signature", Method: "GET", Path: path, Want: 401, Token: tamperedPayload},
			{Name: "signature removed", Method: "GET", Path: path, Want: 401, Token: parts[0] + "." + parts[1] + "."},
			{Name: "signed with another key", Method: "GET", Path: path, Want: 401,
				Token: testenv.ForgeJWT(t, header, claims, "HS256", []byte("another-secret-another-secret-another!"))},
			{Name: "wrong audience", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, header, with("aud", "other"), "HS256", key)},
			{Name: "no audience", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, header, with("aud", nil), "HS256", key)},
			{Name: "wrong issuer", Method: "GET", Path: path, Want: 401,
				Token: testenv.ForgeJWT(t, header, with("iss", "https://evil.example"), "HS256", key)},
			{Name: "claims version 1", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, header, with("ver", 1), "HS256", key)},
			{Name: "no expiry", Method: "GET", Path: path, Want: 401, Token: testenv.ForgeJWT(t, header, with("exp", nil), "HS256", key)},
			{Name: "expired a second ago", Method: "GET", Path: path, Want: 401,
				Token: testenv.ForgeJWT(t, header, with("exp", float64(env.Clock.Now().Unix()-1)), "HS256", key)},
			{Name: "control: later expiry re-signed", Method: "GET", Path: path, Want: 200,
				Token: testenv.ForgeJWT(t, header, with("exp", future), "HS256", key)},
			{Name: "verify with alg none", Method: "GET", Path: "/v1/auth/verify", Want: 401, Token: testenv.ForgeJWT(t, alg("none"), claims, "none", nil)},
			{Name: "switch-org with alg none", Method: "POST", Path: "/v1/auth/switch-org", Want: 401,
				Body: map[string]string{"org_id": a.OrgID}, Token: testenv.ForgeJWT(t, alg("none"), claims, "none", nil)},
		})
	})
}

func TestSigninAccessTokenExpiry(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		t.Run("valid after 59 minutes", func(t *testing.T) {
			env.Clock.Advance(59 * time.Minute)
			env.Call(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 200)
			env.Call(t, "GET", "/v1/auth/verify", a.Access, nil).Want(t, 200)
		})
		t.Run("expired after 61 minutes", func(t *testing.T) {
			env.Clock.Advance(2 * time.Minute)
			env.Call(t, "GET", "/v1/auth/me", a.Access, nil).Want(t, 401)
			env.Call(t, "GET", "/v1/auth/verify", a.Access, nil).Want(t, 401)
			env.Call(t, "POST", "/v1/auth/switch-org", a.Access, map[string]string{"org_id": a.OrgID}).Want(t, 401)
		})
		t.Run("the refresh token still gives a fresh access token", func(t *testing.T) {
			r := env.Refresh(t, a.Refresh).Want(t, 200)
			env.Call(t, "GET", "/v1/auth/me", r.Str("access_token"), nil).Want(t, 200)
		})
	})
}
