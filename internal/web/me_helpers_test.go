package web_test

// Helpers shared by the me_*_test.go and keys_*_test.go files. Names carry
// a "me" prefix so they do not collide with helpers of other test files in
// this package.

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// allTools is the canonical tool list of CONTRACT §4.
var allTools = []string{"tasks", "notes", "sign", "links", "forms", "croncrunch", "crm"}

// meClaims decodes the payload of a JWT without checking it.
func meClaims(t testing.TB, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q has %d parts; want 3", jwt, len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("decode JWT payload: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("JWT payload %s: %v", raw, err)
	}
	return m
}

// meSID returns the session id (sid claim) of an access token.
func meSID(t testing.TB, jwt string) string {
	t.Helper()
	sid, _ := meClaims(t, jwt)["sid"].(string)
	if sid == "" {
		t.Fatalf("access token has no sid claim: %v", meClaims(t, jwt))
	}
	return sid
}

// meLogin signs a in again and returns the new session's access and refresh tokens.
func meLogin(t testing.TB, env *testenv.Env, a *testenv.Account) (access, refresh string) {
	t.Helper()
	r := env.Do(t, "POST", "/v1/auth/login", "", map[string]string{"email": a.Email, "password": a.Password}).Want(t, 200)
	return r.Str("access_token"), r.Str("refresh_token")
}

// meCreateKey creates a user API key with body and returns the response.
func meCreateKey(t testing.TB, env *testenv.Env, bearer string, body any) *testenv.Resp {
	t.Helper()
	return env.Do(t, "POST", "/v1/me/api-keys", bearer, body).Want(t, 200)
}

// meKeyToken creates a user key for a's personal org and exchanges it; it
// returns the access token of the exchange (a non-full session).
func meKeyToken(t testing.TB, env *testenv.Env, a *testenv.Account) string {
	t.Helper()
	secret := meCreateKey(t, env, a.Access, map[string]any{"name": "test key"}).Str("api_key.secret")
	return env.Do(t, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret}).Want(t, 200).Str("access_token")
}

// meExec runs one raw SQL statement on the test database.
func meExec(t testing.TB, env *testenv.Env, query string, args ...any) {
	t.Helper()
	if _, err := env.Store.DB().Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// meTeamOrg creates a team org named name directly in the database (POST
// /v1/orgs is not built yet) with the given members in order, each a user
// id and a role. It returns the org id.
func meTeamOrg(t testing.TB, env *testenv.Env, name string, members ...[2]string) string {
	t.Helper()
	id := uuid.NewString()
	now := env.Clock.Now().UnixMicro()
	meExec(t, env, `INSERT INTO orgs (id, name, slug, avatar_url, kind, created_at) VALUES ($1, $2, $3, '', 'team', $4)`,
		id, name, "team-"+testenv.RandomHex(6), now)
	for i, m := range members {
		meExec(t, env, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)`,
			id, m[0], m[1], now+int64(i))
	}
	return id
}

// meOrgDeleted reports whether org id is soft-deleted (or gone).
func meOrgDeleted(t testing.TB, env *testenv.Env, id string) bool {
	t.Helper()
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM orgs WHERE id = $1 AND deleted_at IS NULL`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 0
}

// meHash is the stored form of a secret: SHA-256 hex (docs/decisions.md).
func meHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// meMailCount counts the messages the sink received for addr.
func meMailCount(env *testenv.Env, addr string) int {
	env.Svc.Wait()
	n := 0
	for _, m := range env.Mail.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, addr) {
				n++
			}
		}
	}
	return n
}

// meTime parses an RFC 3339 timestamp of a response.
func meTime(t testing.TB, field string, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s = %#v; want an RFC 3339 string", field, v)
	}
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("%s = %q: %v", field, s, err)
	}
	return tm
}

// meNear fails unless got is within 2 s of want.
func meNear(t testing.TB, field string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("%s = %s; want %s (±2s)", field, got.Format(time.RFC3339), want.Format(time.RFC3339))
	}
}

// meList returns the array at key of r's body, failing when it is not one
// (a JSON null fails too).
func meList(t testing.TB, r *testenv.Resp, key string) []map[string]any {
	t.Helper()
	arr, ok := r.JSON()[key].([]any)
	if !ok {
		t.Fatalf("%s = %#v in %s; want an array", key, r.JSON()[key], r.Body)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s[%d] = %#v; want an object", key, i, v)
		}
		out[i] = m
	}
	return out
}

// meStrings converts a JSON array of strings.
func meStrings(v any) []string {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func meEqual(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// meWantError fails unless r's body is {"error": non-empty string}.
func meWantError(t testing.TB, r *testenv.Resp) {
	t.Helper()
	m := r.JSON()
	if s, _ := m["error"].(string); s == "" || len(m) != 1 {
		t.Errorf("error body = %s; want {\"error\": message}", r.Body)
	}
}
