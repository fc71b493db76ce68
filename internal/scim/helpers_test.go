package scim_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// directory is a SCIM client of one workspace: what Okta or Entra is.
type directory struct {
	env   *testenv.Env
	token string
}

// newDirectory creates a SCIM token of org as owner's token.
func newDirectory(t *testing.T, env *testenv.Env, ownerToken, org string) (*directory, string) {
	t.Helper()
	r := env.Do(t, "POST", "/v1/orgs/"+org+"/scim-tokens", ownerToken, map[string]string{"name": "Okta"}).Want(t, 200)
	return &directory{env: env, token: r.Str("scim_token.token")}, r.Str("scim_token.id")
}

// do sends a SCIM request and checks what RFC 7644 asks of every answer:
// application/scim+json, and on an error the error shape with status as a
// string equal to the HTTP status.
func (d *directory) do(t *testing.T, method, path string, body any) *testenv.Resp {
	t.Helper()
	r := d.env.Do(t, method, "/scim/v2"+path, d.token, body)
	checkSCIM(t, method+" "+path, r)
	return r
}

func checkSCIM(t *testing.T, what string, r *testenv.Resp) {
	t.Helper()
	if r.Status == 204 {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/scim+json") {
		t.Errorf("%s: Content-Type %q; want application/scim+json", what, ct)
	}
	if r.Status >= 400 {
		m := r.JSON()
		if s, _ := m["schemas"].([]any); len(s) != 1 || s[0] != "urn:ietf:params:scim:api:messages:2.0:Error" {
			t.Errorf("%s: error schemas = %v; want the SCIM error URN", what, m["schemas"])
		}
		if st, _ := m["status"].(string); st != strconv.Itoa(r.Status) {
			t.Errorf("%s: error status = %#v; want the string %q", what, m["status"], strconv.Itoa(r.Status))
		}
		if d, _ := m["detail"].(string); d == "" {
			t.Errorf("%s: error without detail: %s", what, r.Body)
		}
	}
}

// users lists with filter and returns the answer.
func (d *directory) users(t *testing.T, filter string, extra ...string) *testenv.Resp {
	t.Helper()
	q := "?filter=" + url.QueryEscape(filter)
	for _, e := range extra {
		q += "&" + e
	}
	return d.do(t, "GET", "/Users"+q, nil).Want(t, 200)
}

// total is a list answer's totalResults.
func total(t *testing.T, r *testenv.Resp) int {
	t.Helper()
	n, _ := r.Get("totalResults").(float64)
	return int(n)
}

// userBody is a user resource as Okta sends it.
func userBody(email, external string, active bool) map[string]any {
	return map[string]any{
		"schemas":  []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
		"userName": email, "externalId": external, "active": active,
		"name":        map[string]any{"givenName": "Ada", "familyName": "Lovelace"},
		"emails":      []map[string]any{{"primary": true, "value": email, "type": "work"}},
		"displayName": "Ada Lovelace",
	}
}

// accountOf is the id of the account of address email, "" when none.
func accountOf(t *testing.T, env *testenv.Env, email string) (id string, verified bool, password string) {
	t.Helper()
	rows, err := env.Store.DB().Query(`SELECT id, email_verified, COALESCE(password_hash, '') FROM users WHERE email_key = $1`, strings.ToLower(email))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&id, &verified, &password); err != nil {
			t.Fatal(err)
		}
	}
	return id, verified, password
}

// orgToken switches a's session into org.
func orgToken(t *testing.T, env *testenv.Env, token, org string) string {
	t.Helper()
	return env.Do(t, "POST", "/v1/auth/switch-org", token, map[string]string{"org_id": org}).Want(t, 200).Str("access_token")
}

// patch is a PATCH request body of ops.
func patch(ops ...map[string]any) map[string]any {
	return map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"}, "Operations": ops}
}

func urlQuery(s string) string { return url.QueryEscape(s) }

// first is sub-attribute sub of the first value of multi-valued attr.
func first(r *testenv.Resp, attr, sub string) any {
	vs, _ := r.JSON()[attr].([]any)
	if len(vs) == 0 {
		return nil
	}
	m, _ := vs[0].(map[string]any)
	return m[sub]
}
