package oauth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// browser is a cookie-keeping HTTP client that does not follow redirects,
// standing in for a person on the hosted pages.
type browser struct {
	env *testenv.Env
	c   *http.Client
}

func newBrowser(t testing.TB, env *testenv.Env) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{env: env, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (p *page) location() string { return p.header.Get("Location") }

func (b *browser) do(t testing.TB, method, rawURL string, form url.Values) *page {
	t.Helper()
	if strings.HasPrefix(rawURL, "/") {
		rawURL = b.env.URL + rawURL
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return &page{status: res.StatusCode, header: res.Header, body: string(data)}
}

func (b *browser) get(t testing.TB, u string) *page { return b.do(t, "GET", u, nil) }

func (b *browser) post(t testing.TB, u string, form url.Values) *page {
	return b.do(t, "POST", u, form)
}

// signIn signs the browser in with a password on the hosted page.
func (b *browser) signIn(t testing.TB, a *testenv.Account) {
	t.Helper()
	p := b.post(t, "/signin", url.Values{"email": {a.Email}, "password": {a.Password}, "next": {"/signin"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("sign-in status = %d, body %s; want 303", p.status, p.body)
	}
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)

// hiddenFields returns the hidden inputs of a page's forms.
func hiddenFields(body string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// consentAt opens an authorization URL in a signed-in browser, approves
// it for orgID and returns the redirect to the client.
func (b *browser) consentAt(t testing.TB, authURL, orgID string) *url.URL {
	t.Helper()
	p := b.get(t, authURL)
	if p.status != http.StatusOK || !strings.Contains(p.body, `name="org_id"`) {
		t.Fatalf("authorize page status = %d, body %s; want the consent page", p.status, p.body)
	}
	form := hiddenFields(p.body)
	form.Set("decision", "approve")
	form.Set("org_id", orgID)
	p = b.post(t, "/oauth/authorize", form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("consent status = %d, body %s; want 303", p.status, p.body)
	}
	u, err := url.Parse(p.location())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// registerClient registers a public client and returns its client_id.
func registerClient(t testing.TB, env *testenv.Env, md map[string]any) string {
	t.Helper()
	r := env.Do(t, "POST", "/oauth/register", "", md).Want(t, http.StatusCreated)
	id := r.Str("client_id")
	if id == "" {
		t.Fatalf("registration without client_id: %s", r.Body)
	}
	return id
}

// claims decodes an access token's payload without checking it.
func claims(t testing.TB, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// teamOrg makes a team workspace with a as its owner, straight in the store
// (the organizations API is another issue).
func teamOrg(t testing.TB, env *testenv.Env, a *testenv.Account, name string) string {
	t.Helper()
	ctx := context.Background()
	o := &workspace.Org{ID: newUUID(), Name: name, Slug: "team-" + testenv.RandomHex(4), Kind: workspace.OrgTeam, CreatedAt: env.Clock.Now()}
	if err := env.Store.CreateOrg(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.AddMember(ctx, &workspace.Membership{OrgID: o.ID, UserID: a.UserID, Role: workspace.RoleAdmin, JoinedAt: env.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	return o.ID
}

func newUUID() string {
	h := testenv.RandomHex(16)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
}

// tokenPost posts a form to the token endpoint.
func tokenPost(t testing.TB, env *testenv.Env, form url.Values) *testenv.Resp {
	t.Helper()
	res, err := env.Client.PostForm(env.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return &testenv.Resp{Status: res.StatusCode, Header: res.Header, Body: data}
}

// wantOAuthError checks an RFC 6749 §5.2 error answer.
func wantOAuthError(t testing.TB, r *testenv.Resp, status int, code string) {
	t.Helper()
	if r.Status != status || r.Str("error") != code {
		t.Fatalf("got %d %s; want %d with error %q", r.Status, r.Body, status, code)
	}
	d, ok := r.JSON()["error_description"].(string)
	if !ok {
		t.Fatalf("error without error_description: %s", r.Body)
	}
	// RFC 6749 §5.2: %x20-21 / %x23-5B / %x5D-7E.
	for _, c := range d {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			t.Fatalf("error_description %q has %q, outside RFC 6749 §5.2", d, c)
		}
	}
}

func readResp(t testing.TB, res *http.Response) *testenv.Resp {
	t.Helper()
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &testenv.Resp{Status: res.StatusCode, Header: res.Header, Body: data}
}
