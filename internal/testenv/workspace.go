package testenv

import (
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// CreateTeam creates a team in org through the API as token and returns
// its id.
func (e *Env) CreateTeam(t testing.TB, token, org, name string) string {
	t.Helper()
	r := e.Call(t, "POST", "/v1/orgs/"+org+"/teams", token, map[string]string{"name": name}).Want(t, 200)
	id := r.Str("team.id")
	if !IsUUID(id) {
		t.Fatalf("POST teams answered %s; want team.id a uuid", r.Body)
	}
	return id
}

// Teams returns org's teams list as token sees it, by id.
func (e *Env) Teams(t testing.TB, token, org string) map[string]map[string]any {
	t.Helper()
	r := e.Call(t, "GET", "/v1/orgs/"+org+"/teams", token, nil).Want(t, 200)
	out := map[string]map[string]any{}
	for _, tm := range r.List(t, "teams") {
		id, _ := tm["id"].(string)
		out[id] = tm
	}
	return out
}

// TeamMembers returns a team's members, user id → role.
func (e *Env) TeamMembers(t testing.TB, token, org, team string) map[string]string {
	t.Helper()
	r := e.Call(t, "GET", "/v1/orgs/"+org+"/teams/"+team+"/members", token, nil).Want(t, 200)
	out := map[string]string{}
	for _, m := range r.List(t, "members") {
		id, _ := m["user_id"].(string)
		role, _ := m["role"].(string)
		out[id] = role
	}
	return out
}

// SetTool enables or disables one tool of org as token.
func (e *Env) SetTool(t testing.TB, token, org, tool string, enabled bool) {
	t.Helper()
	e.Call(t, "PUT", "/v1/orgs/"+org+"/tools", token, map[string]any{"tool": tool, "enabled": enabled}).Want(t, 200)
}

// ToolsExcept is the canonical tool list (workspace.Tools) without off.
func ToolsExcept(off ...string) []string {
	out := []string{}
	for _, tool := range workspace.Tools {
		if !slices.Contains(off, tool) {
			out = append(out, tool)
		}
	}
	return out
}

// CreateOrgKey creates an API key of org with body as token and returns
// the answer.
func (e *Env) CreateOrgKey(t testing.TB, token, org string, body any) *Resp {
	t.Helper()
	return e.Call(t, "POST", "/v1/orgs/"+org+"/api-keys", token, body).Want(t, 200)
}

// Domain returns a fresh domain name: the PostgreSQL database is shared by
// every test of the run, and a domain is verified by one org at most.
func Domain() string { return "acme-" + RandomHex(5) + ".test" }

// ClaimDomain claims domain for org as token, in mode unless it is "",
// and returns the claim object.
func (e *Env) ClaimDomain(t testing.TB, token, org, domain, mode string) map[string]any {
	t.Helper()
	body := map[string]string{"domain": domain}
	if mode != "" {
		body["mode"] = mode
	}
	r := e.Call(t, "POST", "/v1/orgs/"+org+"/domains", token, body).Want(t, 200)
	return r.Obj(t, "domain")
}

// PublishProof serves the claim's TXT proof from the test DNS server,
// with the extra values, in place of what was served at that name.
func (e *Env) PublishProof(t testing.TB, claim map[string]any, extra ...string) {
	t.Helper()
	rec, _ := claim["dns_record"].(map[string]any)
	name, _ := rec["name"].(string)
	value, _ := rec["value"].(string)
	if name == "" || value == "" {
		t.Fatalf("claim %v has no dns_record {name, value}", claim)
	}
	e.DNS.SetTXT(name, append([]string{value}, extra...)...)
}

// VerifiedDomain claims domain for org in mode, publishes the proof and
// verifies it; it returns the claim id.
func (e *Env) VerifiedDomain(t testing.TB, token, org, domain, mode string) string {
	t.Helper()
	c := e.ClaimDomain(t, token, org, domain, mode)
	e.PublishProof(t, c)
	id, _ := c["id"].(string)
	r := e.Call(t, "POST", "/v1/orgs/"+org+"/domains/"+id+"/verify", token, nil).Want(t, 200)
	if r.Get("domain.verified") != true {
		t.Fatalf("verify answered %s; want domain.verified true", r.Body)
	}
	return id
}

// WantSuggestion checks a GET /v1/me/discoverable answer: null when org is
// "", else a suggestion of org for domain.
func WantSuggestion(t testing.TB, r *Resp, org, domain string) {
	t.Helper()
	body := r.JSON()
	v, ok := body["suggestion"]
	if !ok {
		t.Fatalf("discoverable answered %s; want a suggestion field", r.Body)
	}
	if org == "" {
		if v != nil {
			t.Errorf("suggestion = %v; want null", v)
		}
		return
	}
	s, _ := v.(map[string]any)
	if s == nil {
		t.Fatalf("suggestion = %#v; want {org, domain} of org %s", v, org)
	}
	CheckKeys(t, "suggestion", s, "org", "domain")
	if s["domain"] != domain {
		t.Errorf("suggestion.domain = %v; want %s", s["domain"], domain)
	}
	o, _ := s["org"].(map[string]any)
	CheckKeys(t, "suggestion.org", o, "id", "name", "slug", "avatar_url")
	if o["id"] != org {
		t.Errorf("suggestion.org.id = %v; want %s", o["id"], org)
	}
	for _, k := range []string{"name", "slug", "avatar_url"} {
		if _, ok := o[k].(string); !ok {
			t.Errorf("suggestion.org.%s = %#v; want a string", k, o[k])
		}
	}
}
