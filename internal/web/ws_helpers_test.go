package web_test

// Helpers shared by the ws_*_test.go files: the workspace API of spec 4.4
// (teams, tools, org API keys, audit log, domain claims) and the
// discoverable endpoints of 4.2. Every name starts with "ws"; the files also
// use the me* and signin* helpers of the package.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// wsCase is one row of an endpoint's scenario table.
type wsCase struct {
	name       string
	method     string
	path       string
	token      string
	body       any // marshalled to JSON unless a string or []byte; nil sends no body
	wantStatus int
	wantBody   func(t *testing.T, r *testenv.Resp) // optional
	before     func(t *testing.T)                  // optional: runs first (e.g. publishes a DNS record)
}

// wsRun runs each row as a subtest, in order: rows may depend on earlier ones.
func wsRun(t *testing.T, env *testenv.Env, cases []wsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before(t)
			}
			r := wsDo(t, env, tc.method, tc.path, tc.token, tc.body)
			if r.Status != tc.wantStatus {
				t.Fatalf("%s %s: status = %d, body %s; want %d", tc.method, tc.path, r.Status, r.Body, tc.wantStatus)
			}
			if tc.wantBody != nil {
				tc.wantBody(t, r)
			}
		})
	}
}

// wsDo sends one request and checks the rules every answer follows (JSON,
// X-Request-Id, no 5xx, {error} on every non-2xx).
func wsDo(t testing.TB, env *testenv.Env, method, path, token string, body any) *testenv.Resp {
	t.Helper()
	return signinCall(t, env, method, path, token, body)
}

// wsWorld is a team org with one user of each role, and a stranger.
type wsWorld struct {
	owner, admin, billing, member, stranger *testenv.Account
	org                                     string // the team org
}

// wsNewWorld registers five users and puts four of them in a new team org.
func wsNewWorld(t testing.TB, env *testenv.Env) *wsWorld {
	t.Helper()
	w := &wsWorld{owner: env.Register(t), admin: env.Register(t), billing: env.Register(t), member: env.Register(t), stranger: env.Register(t)}
	w.org = meTeamOrg(t, env, "Acme "+testenv.RandomHex(3),
		[2]string{w.owner.UserID, "owner"}, [2]string{w.admin.UserID, "admin"},
		[2]string{w.billing.UserID, "billing"}, [2]string{w.member.UserID, "member"})
	return w
}

// wsDomain returns a fresh domain name: the PostgreSQL database is shared by
// every test of the run, and a domain is verified by one org at most.
func wsDomain() string { return "acme-" + testenv.RandomHex(5) + ".test" }

// wsRegisterAt registers a new account with an address at domain.
func wsRegisterAt(t testing.TB, env *testenv.Env, domain string) *testenv.Account {
	t.Helper()
	a := &testenv.Account{Email: "x-" + testenv.RandomHex(5) + "@" + domain, Password: "password-" + testenv.RandomHex(4), Name: "Domain User"}
	r := env.Do(t, "POST", "/v1/auth/register", "", map[string]string{"email": a.Email, "password": a.Password, "name": a.Name}).Want(t, 200)
	a.UserID, a.OrgID = r.Str("user.id"), r.Str("org.id")
	a.Access, a.Refresh = r.Str("access_token"), r.Str("refresh_token")
	return a
}

// wsVerifyEmail opens the confirmation link mailed to a at registration.
func wsVerifyEmail(t testing.TB, env *testenv.Env, a *testenv.Account) {
	t.Helper()
	tok := testenv.TokenFromLink(t, env.Mail.WaitFor(t, a.Email, 5*time.Second).Text, signinVerifyLink)
	r := env.Do(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": tok}).Want(t, 200)
	if r.Get("user.email_verified") != true {
		t.Fatalf("verify-email answered %s; want user.email_verified true", r.Body)
	}
}

// wsVerifiedAt registers an account at domain and confirms its address.
func wsVerifiedAt(t testing.TB, env *testenv.Env, domain string) *testenv.Account {
	t.Helper()
	a := wsRegisterAt(t, env, domain)
	wsVerifyEmail(t, env, a)
	return a
}

// wsRole returns userID's role in org read from the database, "" when they
// are not a member.
func wsRole(t testing.TB, env *testenv.Env, org, userID string) string {
	t.Helper()
	var roles []string
	rows, err := env.Store.DB().Query(`SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2`, org, userID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		roles = append(roles, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(roles) > 1 {
		t.Fatalf("user %s has %d memberships of org %s; want at most 1", userID, len(roles), org)
	}
	if len(roles) == 0 {
		return ""
	}
	return roles[0]
}

// wsCreateTeam creates a team through the API and returns its id.
func wsCreateTeam(t testing.TB, env *testenv.Env, token, org, name string) string {
	t.Helper()
	r := wsDo(t, env, "POST", "/v1/orgs/"+org+"/teams", token, map[string]string{"name": name}).Want(t, 200)
	id := r.Str("team.id")
	if !signinUUID.MatchString(id) {
		t.Fatalf("POST teams answered %s; want team.id a uuid", r.Body)
	}
	return id
}

// wsTeams returns the teams list of org seen by token, by id.
func wsTeams(t testing.TB, env *testenv.Env, token, org string) map[string]map[string]any {
	t.Helper()
	r := wsDo(t, env, "GET", "/v1/orgs/"+org+"/teams", token, nil).Want(t, 200)
	out := map[string]map[string]any{}
	for _, tm := range meList(t, r, "teams") {
		id, _ := tm["id"].(string)
		out[id] = tm
	}
	return out
}

// wsTeamMembers returns the team's members, user id → role.
func wsTeamMembers(t testing.TB, env *testenv.Env, token, org, team string) map[string]string {
	t.Helper()
	r := wsDo(t, env, "GET", "/v1/orgs/"+org+"/teams/"+team+"/members", token, nil).Want(t, 200)
	out := map[string]string{}
	for _, m := range meList(t, r, "members") {
		id, _ := m["user_id"].(string)
		role, _ := m["role"].(string)
		out[id] = role
	}
	return out
}

// wsCheckKeys fails unless the object m has exactly the keys want.
func wsCheckKeys(t testing.TB, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s has fields %v; want exactly %v", what, got, want)
	}
}

// wsObj returns the object at a dotted path of r's body, failing when it is
// not one.
func wsObj(t testing.TB, r *testenv.Resp, path string) map[string]any {
	t.Helper()
	m, ok := r.Get(path).(map[string]any)
	if !ok {
		t.Fatalf("%s = %#v in %s; want an object", path, r.Get(path), r.Body)
	}
	return m
}

// wsToolMatrix returns the tool matrix of an answer as "tool=enabled" strings
// in answer order, checking each row is exactly {tool, enabled}.
func wsToolMatrix(t testing.TB, r *testenv.Resp) []string {
	t.Helper()
	var out []string
	for i, row := range meList(t, r, "tools") {
		wsCheckKeys(t, fmt.Sprintf("tools[%d]", i), row, "tool", "enabled")
		on, ok := row["enabled"].(bool)
		if !ok {
			t.Errorf("tools[%d].enabled = %#v; want a boolean", i, row["enabled"])
		}
		out = append(out, fmt.Sprintf("%v=%v", row["tool"], on))
	}
	return out
}

// wsMatrix is the expected matrix: every tool enabled except off.
func wsMatrix(off ...string) []string {
	out := make([]string, len(allTools))
	for i, tool := range allTools {
		out[i] = fmt.Sprintf("%s=%v", tool, !slices.Contains(off, tool))
	}
	return out
}

// wsToolsExcept is the canonical tool list without off.
func wsToolsExcept(off ...string) []string {
	out := []string{}
	for _, tool := range allTools {
		if !slices.Contains(off, tool) {
			out = append(out, tool)
		}
	}
	return out
}

// wsSetTool enables or disables one tool of org as token.
func wsSetTool(t testing.TB, env *testenv.Env, token, org, tool string, enabled bool) {
	t.Helper()
	wsDo(t, env, "PUT", "/v1/orgs/"+org+"/tools", token, map[string]any{"tool": tool, "enabled": enabled}).Want(t, 200)
}

// wsTokenOrg returns the org claim of an access token: id, role, tools.
func wsTokenOrg(t testing.TB, jwt string) (id, role string, tools []string) {
	t.Helper()
	org, _ := meClaims(t, jwt)["org"].(map[string]any)
	if org == nil {
		t.Fatalf("access token claims %v have no org object", meClaims(t, jwt))
	}
	id, _ = org["id"].(string)
	role, _ = org["role"].(string)
	return id, role, meStrings(org["tools"])
}

// wsCreateOrgKey creates an org key with body and returns the answer.
func wsCreateOrgKey(t testing.TB, env *testenv.Env, token, org string, body any) *testenv.Resp {
	t.Helper()
	return wsDo(t, env, "POST", "/v1/orgs/"+org+"/api-keys", token, body).Want(t, 200)
}

// wsExchange exchanges an API key and returns the answer.
func wsExchange(t testing.TB, env *testenv.Env, secret string) *testenv.Resp {
	t.Helper()
	return wsDo(t, env, "POST", "/v1/auth/token", "", map[string]string{"api_key": secret})
}

// wsClaim claims domain for org as token and returns the claim object.
func wsClaim(t testing.TB, env *testenv.Env, token, org, domain, mode string) map[string]any {
	t.Helper()
	body := map[string]string{"domain": domain}
	if mode != "" {
		body["mode"] = mode
	}
	r := wsDo(t, env, "POST", "/v1/orgs/"+org+"/domains", token, body).Want(t, 200)
	return wsObj(t, r, "domain")
}

// wsPublish serves the claim's TXT proof from the test DNS server (added to
// any values already served at that name).
func wsPublish(t testing.TB, env *testenv.Env, claim map[string]any, extra ...string) {
	t.Helper()
	rec, _ := claim["dns_record"].(map[string]any)
	name, _ := rec["name"].(string)
	value, _ := rec["value"].(string)
	if name == "" || value == "" {
		t.Fatalf("claim %v has no dns_record {name, value}", claim)
	}
	env.DNS.SetTXT(name, append([]string{value}, extra...)...)
}

// wsVerifiedDomain claims domain for org in mode, publishes the proof and
// verifies it; it returns the claim id.
func wsVerifiedDomain(t testing.TB, env *testenv.Env, token, org, domain, mode string) string {
	t.Helper()
	c := wsClaim(t, env, token, org, domain, mode)
	wsPublish(t, env, c)
	id, _ := c["id"].(string)
	r := wsDo(t, env, "POST", "/v1/orgs/"+org+"/domains/"+id+"/verify", token, nil).Want(t, 200)
	if r.Get("domain.verified") != true {
		t.Fatalf("verify answered %s; want domain.verified true", r.Body)
	}
	return id
}

// wsEntry is one audit entry of GET /v1/orgs/{id}/audit.
type wsEntry = map[string]any

// wsAudit reads org's audit log as token with query (e.g. "limit=500").
func wsAudit(t testing.TB, env *testenv.Env, token, org, query string) []wsEntry {
	t.Helper()
	path := "/v1/orgs/" + org + "/audit"
	if query != "" {
		path += "?" + query
	}
	return meList(t, wsDo(t, env, "GET", path, token, nil).Want(t, 200), "entries")
}

// wsAuditIDs is the set of entry ids of org's log.
func wsAuditIDs(t testing.TB, env *testenv.Env, token, org string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range wsAudit(t, env, token, org, "limit=500") {
		id, _ := e["id"].(string)
		seen[id] = true
	}
	return seen
}

// wsNewEntries returns org's entries not in seen and adds them to it.
func wsNewEntries(t testing.TB, env *testenv.Env, token, org string, seen map[string]bool) []wsEntry {
	t.Helper()
	var out []wsEntry
	for _, e := range wsAudit(t, env, token, org, "limit=500") {
		id, _ := e["id"].(string)
		if !seen[id] {
			seen[id] = true
			out = append(out, e)
		}
	}
	return out
}

// wsCheckEntry checks an audit entry's shape (CONTRACT §3): every field a
// string, meta a JSON-encoded object, at an RFC 3339 time.
func wsCheckEntry(t testing.TB, e wsEntry) {
	t.Helper()
	wsCheckKeys(t, fmt.Sprintf("audit entry %v", e["action"]), e, "id", "org_id", "tool", "action", "actor_id", "target_type", "target_id", "meta", "at")
	for k, v := range e {
		if _, ok := v.(string); !ok {
			t.Errorf("audit entry %v: %s = %#v; want a string", e["action"], k, v)
		}
	}
	meta, _ := e["meta"].(string)
	var m map[string]any
	if err := json.Unmarshal([]byte(meta), &m); err != nil || m == nil {
		t.Errorf("audit entry %v: meta = %q; want a JSON-encoded object", e["action"], meta)
	}
	if at, _ := e["at"].(string); at != "" {
		if _, err := time.Parse(time.RFC3339, at); err != nil {
			t.Errorf("audit entry %v: at = %q is not RFC 3339", e["action"], at)
		}
	}
}

// wsInsertAudit inserts n audit rows for org directly in the database, the
// i-th (0-based) at base minus i+1 milliseconds, so the newest comes first.
func wsInsertAudit(t testing.TB, env *testenv.Env, org, tool, action string, n int, base time.Time) {
	t.Helper()
	for start := 0; start < n; start += 100 {
		end := min(start+100, n)
		var sb strings.Builder
		sb.WriteString(`INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES `)
		var args []any
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteString(", ")
			}
			p := len(args)
			fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9)
			args = append(args, uuid.NewString(),
				org, tool, action, "", "issue", fmt.Sprint(i), `{"n":`+fmt.Sprint(i)+`}`,
				base.Add(-time.Duration(i+1)*time.Millisecond).UnixMicro())
		}
		meExec(t, env, sb.String(), args...)
	}
}

// wsWantSuggestion checks a GET /v1/me/discoverable answer: null when org is
// "", else a suggestion of org for domain.
func wsWantSuggestion(t testing.TB, r *testenv.Resp, org, domain string) {
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
	wsCheckKeys(t, "suggestion", s, "org", "domain")
	if s["domain"] != domain {
		t.Errorf("suggestion.domain = %v; want %s", s["domain"], domain)
	}
	o, _ := s["org"].(map[string]any)
	wsCheckKeys(t, "suggestion.org", o, "id", "name", "slug", "avatar_url")
	if o["id"] != org {
		t.Errorf("suggestion.org.id = %v; want %s", o["id"], org)
	}
	for _, k := range []string{"name", "slug", "avatar_url"} {
		if _, ok := o[k].(string); !ok {
			t.Errorf("suggestion.org.%s = %#v; want a string", k, o[k])
		}
	}
}

// wsRaw sends method path with bearer and no body from any goroutine: it
// returns the status, or -1 when the request failed, instead of failing the
// test.
func wsRaw(env *testenv.Env, method, path, bearer string) int {
	req, err := http.NewRequest(method, env.URL+path, nil)
	if err != nil {
		return -1
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	res, err := env.Client.Do(req)
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode
}
