package app_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestNamesOneLine: every name (a person's, an org's, a team's, an API
// key's, a form's, a conversion's, a passkey's) and a Forms
// autoresponder's subject refuse line breaks and
// other control characters with one answer, 400 "<field> must not contain
// line breaks or control characters" (issue 23 item 7): such a name
// reaches mail subjects and bodies, audit logs and pages. The same request
// with a one-line name is accepted.
func TestNamesOneLine(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		team := env.Do(t, "POST", "/v1/orgs/"+org+"/teams", owner.Token, map[string]any{"name": "Ops"}).Want(t, 200).Str("team.id")
		type call struct {
			name, field string
			do          func(value string) *testenv.Resp
			ok          int // the status of a one-line value
		}
		json := func(method, path, token string, body func(v string) any) func(string) *testenv.Resp {
			return func(v string) *testenv.Resp { return env.Do(t, method, path, token, body(v)) }
		}
		named := func(v string) any { return map[string]any{"name": v} }
		calls := []call{
			{"sign-up", "name", json("POST", "/v1/auth/register", "", func(v string) any {
				return map[string]any{"email": testenv.Email(), "password": "Harbor-" + testenv.RandomHex(6), "name": v}
			}), 200},
			{"profile", "name", json("PATCH", "/v1/me", owner.Access, named), 200},
			{"new workspace", "name", json("POST", "/v1/orgs", owner.Access, named), 200},
			{"workspace rename", "name", json("PATCH", "/v1/orgs/"+org, owner.Token, named), 200},
			{"new team", "name", json("POST", "/v1/orgs/"+org+"/teams", owner.Token, named), 200},
			{"team rename", "name", json("PATCH", "/v1/orgs/"+org+"/teams/"+team, owner.Token, named), 200},
			{"personal API key", "name", json("POST", "/v1/me/api-keys", owner.Access, named), 200},
			{"workspace API key", "name", json("POST", "/v1/orgs/"+org+"/api-keys", owner.Token, func(v string) any {
				return map[string]any{"name": v, "role": "member"}
			}), 200},
			{"form", "name", json("POST", "/forms/v1/forms", owner.Token, named), 200},
			{"autoresponder subject", "autoresponder.subject", json("POST", "/forms/v1/forms", owner.Token, func(v string) any {
				return map[string]any{"name": "Contact", "autoresponder": map[string]any{"enabled": true, "subject": v, "body": "Thanks."}}
			}), 200},
			{"conversion", "name", json("POST", "/links/v1/conversions", owner.Token, func(v string) any {
				return map[string]any{"clickId": uuid.NewString(), "name": v}
			}), 404},
			{"passkey rename", "name", json("PATCH", "/v1/me/passkeys/"+uuid.NewString(), owner.Access, named), 404},
		}
		bad := map[string]string{"line feed": "Acme\nBcc: x@evil.test", "carriage return": "Acme\rX", "tab": "Acme\tX",
			"escape": "Acme\x1b[31mX", "next line (C1)": "Acme\u0085X", "line separator": "Acme\u2028X", "paragraph separator": "Acme\u2029X"}
		for _, c := range calls {
			t.Run(c.name, func(t *testing.T) {
				for what, v := range bad {
					r := c.do(v)
					want := c.field + " must not contain line breaks or control characters"
					if r.Status != 400 || r.Str("error") != want {
						t.Errorf("%s: %d %s; want 400 %q", what, r.Status, r.Body, want)
					}
				}
				if r := c.do("Acme " + testenv.RandomHex(3)); r.Status != c.ok {
					t.Errorf("one line: %d %s; want %d", r.Status, r.Body, c.ok)
				}
			})
		}
	})
}
