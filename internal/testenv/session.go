package testenv

import (
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Session is what a Session answer (register, login, magic link, refresh)
// should hold.
type Session struct {
	Email    string // user.email
	Name     string // user.name; "" accepts any non-empty name
	Verified bool   // user.email_verified
	Via      string // the access token's via claim
	UserID   string // "" accepts any uuid
	OrgID    string // "" accepts any uuid
	OrgKind  string // "" means personal
}

// CheckSession checks a Session answer (CONTRACT §3) and the claims of its
// access token (CONTRACT §4).
func (e *Env) CheckSession(t *testing.T, r *Resp, want Session) {
	t.Helper()
	body := r.JSON()
	if body == nil {
		t.Fatalf("session body %q is not a JSON object", r.Body)
	}
	for _, k := range []string{"access_token", "token_type", "expires_at", "refresh_token", "user", "org"} {
		if _, ok := body[k]; !ok {
			t.Errorf("session has no field %q; body %s", k, r.Body)
		}
	}
	if got := r.Str("token_type"); got != "Bearer" {
		t.Errorf("token_type = %q; want %q", got, "Bearer")
	}
	if r.Str("refresh_token") == "" {
		t.Errorf("refresh_token is empty; body %s", r.Body)
	}
	e.CheckExpiry(t, r.Str("expires_at"), time.Hour)
	user, _ := body["user"].(map[string]any)
	CheckUser(t, user, want.Email, want.Name, want.Verified)
	if want.UserID != "" && user["id"] != want.UserID {
		t.Errorf("user.id = %v; want %s", user["id"], want.UserID)
	}
	org, _ := body["org"].(map[string]any)
	kind := want.OrgKind
	if kind == "" {
		kind = "personal"
	}
	CheckOrg(t, org, want.OrgID, kind, "owner")
	claims := Claims(t, r.Str("access_token"))
	CheckClaims(t, claims, user["id"], org, want.Via)
	if claims["sid"] == nil || claims["sid"] == "" {
		t.Errorf("claims sid = %v; want the session id of a sign-in session", claims["sid"])
	}
}

// CheckExpiry checks an RFC 3339 expires_at is ttl ahead of the env's
// clock.
func (e *Env) CheckExpiry(t *testing.T, raw string, ttl time.Duration) {
	t.Helper()
	exp, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		t.Errorf("expires_at = %q is not RFC 3339: %v", raw, err)
		return
	}
	want := e.Clock.Now().Add(ttl)
	if d := exp.Sub(want); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("expires_at = %s; want about %s (clock + %v)", exp.Format(time.RFC3339), want.Format(time.RFC3339), ttl)
	}
}

// CheckUser checks a User record (spec §2).
func CheckUser(t *testing.T, u map[string]any, email, name string, verified bool) {
	t.Helper()
	if u == nil {
		t.Errorf("user is missing or not an object")
		return
	}
	if id, _ := u["id"].(string); !IsUUID(id) {
		t.Errorf("user.id = %v; want a uuid", u["id"])
	}
	if u["email"] != email {
		t.Errorf("user.email = %v; want %q", u["email"], email)
	}
	if n, ok := u["name"].(string); !ok || n == "" || (name != "" && n != name) {
		t.Errorf("user.name = %v; want %q (non-empty)", u["name"], name)
	}
	if v, ok := u["avatar_url"]; ok && v != nil {
		if _, isStr := v.(string); !isStr {
			t.Errorf("user.avatar_url = %v; want a string", v)
		}
	}
	if u["email_verified"] != verified {
		t.Errorf("user.email_verified = %v; want %v", u["email_verified"], verified)
	}
}

// CheckOrg checks an OrgContext (CONTRACT §3) of a new org: it has every
// tool, in canonical order.
func CheckOrg(t *testing.T, o map[string]any, id, kind, role string) {
	t.Helper()
	if o == nil {
		t.Errorf("org is missing or not an object")
		return
	}
	if got, _ := o["id"].(string); !IsUUID(got) || (id != "" && got != id) {
		t.Errorf("org.id = %v; want uuid %q", o["id"], id)
	}
	for _, k := range []string{"name", "slug"} {
		if s, _ := o[k].(string); s == "" {
			t.Errorf("org.%s = %v; want a non-empty string", k, o[k])
		}
	}
	if o["kind"] != kind {
		t.Errorf("org.kind = %v; want %q", o["kind"], kind)
	}
	if o["role"] != role {
		t.Errorf("org.role = %v; want %q", o["role"], role)
	}
	if got := Strings(o["tools"]); !slices.Equal(got, workspace.Tools) {
		t.Errorf("org.tools = %v; want %v", o["tools"], workspace.Tools)
	}
}

// CheckClaims checks access-token claims (version 2) against the user id
// and org context of the same answer.
func CheckClaims(t *testing.T, c map[string]any, userID any, org map[string]any, via string) {
	t.Helper()
	if c["sub"] != userID {
		t.Errorf("claims sub = %v; want user id %v", c["sub"], userID)
	}
	if c["via"] != via {
		t.Errorf("claims via = %v; want %q", c["via"], via)
	}
	if c["ver"] != float64(2) {
		t.Errorf("claims ver = %v; want 2", c["ver"])
	}
	oc, _ := c["org"].(map[string]any)
	if oc == nil {
		t.Errorf("claims org = %v; want {id, role, tools}", c["org"])
		return
	}
	if org != nil {
		if oc["id"] != org["id"] || oc["role"] != org["role"] {
			t.Errorf("claims org = {id %v, role %v}; want {id %v, role %v} as in the answer", oc["id"], oc["role"], org["id"], org["role"])
		}
		if got, want := Strings(oc["tools"]), Strings(org["tools"]); !slices.Equal(got, want) {
			t.Errorf("claims org.tools = %v; want %v as in the answer", got, want)
		}
	}
}
