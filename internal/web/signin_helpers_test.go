package web_test

// Helpers shared by the sign-in scenario tests (spec 4.1 and the matching
// rows of sections 3, 5, 7 and 8). Every name starts with "signin" so the
// files of other endpoints can keep their own helpers.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// signinTools are the seven tools in canonical order (CONTRACT §4); a new
// org has all of them enabled.
var signinTools = []string{"tasks", "notes", "sign", "links", "forms", "croncrunch", "crm"}

// signinTestSecret is the HS256 key testenv.New gives the token signer. The
// forged-token tests re-sign with it; their control case (re-signing the
// unchanged claims answers 200) fails if the two ever drift apart.
const signinTestSecret = "test-secret-test-secret-test-secret!"

// Mail link prefixes (CONTRACT §2; testenv's web and mobile bases).
const (
	signinVerifyLink = "http://web.test/verify-email?token="
	signinWebMagic   = "http://web.test/auth/magic?token="
	signinMobMagic   = "https://mobile.test/app/auth/magic?token="
)

var signinUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// signinCase is one row of an endpoint's scenario table.
type signinCase struct {
	name       string
	method     string
	path       string
	body       any // marshalled to JSON unless a string or []byte; nil sends no body
	token      string
	wantStatus int
	wantBody   func(t *testing.T, r *testenv.Resp) // optional
}

// runSigninCases runs each row as a subtest through signinCall.
func runSigninCases(t *testing.T, env *testenv.Env, cases []signinCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := signinCall(t, env, tc.method, tc.path, tc.token, tc.body)
			if r.Status != tc.wantStatus {
				t.Fatalf("%s %s: status = %d, body %s; want %d", tc.method, tc.path, r.Status, r.Body, tc.wantStatus)
			}
			if tc.wantBody != nil {
				tc.wantBody(t, r)
			}
		})
	}
}

// signinCall sends one request and checks it with signinCheckAnswer.
func signinCall(t testing.TB, env *testenv.Env, method, path, token string, body any) *testenv.Resp {
	t.Helper()
	r := env.Do(t, method, path, token, body)
	signinCheckAnswer(t, method+" "+path, r)
	return r
}

// signinCheckAnswer checks the rules common to every answer (spec §4 and §7):
// JSON, an X-Request-Id, never a 5xx, the Error shape on every non-2xx.
func signinCheckAnswer(t testing.TB, what string, r *testenv.Resp) {
	t.Helper()
	if r.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s: answer has no X-Request-Id header", what)
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		t.Errorf("%s: status %d Content-Type = %q; want application/json (spec 4: all bodies are JSON)", what, r.Status, r.Header.Get("Content-Type"))
	}
	if r.Status >= 500 {
		t.Errorf("%s: status = %d, body %s; want no 5xx", what, r.Status, r.Body)
	}
	if r.Status < 200 || r.Status > 299 {
		signinCheckError(t, what, r)
	}
}

// signinCheckError checks a non-2xx answer's body is an object of exactly
// one non-empty string field "error" (its Content-Type is checked by
// signinCheckAnswer).
func signinCheckError(t testing.TB, what string, r *testenv.Resp) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil || m == nil {
		t.Errorf("%s: status %d body %q is not a JSON object; want {\"error\": string}", what, r.Status, r.Body)
		return
	}
	msg, ok := m["error"].(string)
	if len(m) != 1 || !ok || msg == "" {
		t.Errorf("%s: status %d body %s; want exactly one non-empty string field \"error\"", what, r.Status, r.Body)
	}
}

// signinErrorNames returns a check that the error message mentions each word
// (a 400 names the field at fault).
func signinErrorNames(words ...string) func(t *testing.T, r *testenv.Resp) {
	return func(t *testing.T, r *testenv.Resp) {
		t.Helper()
		msg := r.Str("error")
		for _, w := range words {
			if !strings.Contains(msg, w) {
				t.Errorf("error = %q; want it to name %q", msg, w)
			}
		}
	}
}

// signinWantMessage checks a Message answer: {message: non-empty string}.
func signinWantMessage(t *testing.T, r *testenv.Resp) {
	t.Helper()
	if msg, ok := r.Get("message").(string); !ok || msg == "" {
		t.Errorf("body %s; want a non-empty string field \"message\"", r.Body)
	}
}

// signinRetryAfter checks a 429 carries Retry-After as a positive number of
// seconds.
func signinRetryAfter(t *testing.T, r *testenv.Resp) {
	t.Helper()
	ra := r.Header.Get("Retry-After")
	if ok, _ := regexp.MatchString(`^[1-9][0-9]*$`, ra); !ok {
		t.Errorf("Retry-After = %q; want a positive number of seconds", ra)
	}
}

// signinSession is what a Session answer should hold.
type signinSession struct {
	email    string // user.email
	name     string // user.name; "" accepts any non-empty name
	verified bool   // user.email_verified
	via      string // the access token's via claim
	userID   string // "" accepts any uuid
	orgID    string // "" accepts any uuid
	orgKind  string // "" means personal
}

// signinCheckSession checks a Session answer (CONTRACT §3) and the claims of
// its access token (CONTRACT §4).
func signinCheckSession(t *testing.T, env *testenv.Env, r *testenv.Resp, want signinSession) {
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
	signinCheckExpiry(t, env, r.Str("expires_at"), time.Hour)
	user, _ := body["user"].(map[string]any)
	signinCheckUser(t, user, want.email, want.name, want.verified)
	if want.userID != "" && user["id"] != want.userID {
		t.Errorf("user.id = %v; want %s", user["id"], want.userID)
	}
	org, _ := body["org"].(map[string]any)
	kind := want.orgKind
	if kind == "" {
		kind = "personal"
	}
	signinCheckOrg(t, org, want.orgID, kind, "owner")
	claims := signinAccessClaims(t, r.Str("access_token"))
	signinCheckClaims(t, claims, user["id"], org, want.via)
	if claims["sid"] == nil || claims["sid"] == "" {
		t.Errorf("claims sid = %v; want the session id of a sign-in session", claims["sid"])
	}
}

// signinCheckExpiry checks an RFC 3339 expires_at is ttl ahead of the
// service clock.
func signinCheckExpiry(t *testing.T, env *testenv.Env, raw string, ttl time.Duration) {
	t.Helper()
	exp, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		t.Errorf("expires_at = %q is not RFC 3339: %v", raw, err)
		return
	}
	want := env.Clock.Now().Add(ttl)
	if d := exp.Sub(want); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("expires_at = %s; want about %s (clock + %v)", exp.Format(time.RFC3339), want.Format(time.RFC3339), ttl)
	}
}

// signinCheckUser checks a User record (spec §2).
func signinCheckUser(t *testing.T, u map[string]any, email, name string, verified bool) {
	t.Helper()
	if u == nil {
		t.Errorf("user is missing or not an object")
		return
	}
	if id, _ := u["id"].(string); !signinUUID.MatchString(id) {
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

// signinCheckOrg checks an OrgContext (CONTRACT §3); a new org has every tool.
func signinCheckOrg(t *testing.T, o map[string]any, id, kind, role string) {
	t.Helper()
	if o == nil {
		t.Errorf("org is missing or not an object")
		return
	}
	if got, _ := o["id"].(string); !signinUUID.MatchString(got) || (id != "" && got != id) {
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
	if got := signinStrings(o["tools"]); !slices.Equal(got, signinTools) {
		t.Errorf("org.tools = %v; want %v", o["tools"], signinTools)
	}
}

// signinStrings converts a decoded JSON array of strings.
func signinStrings(v any) []string {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(a))
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// signinCheckClaims checks claims v2 against the user and org context of the
// same answer.
func signinCheckClaims(t *testing.T, c map[string]any, userID any, org map[string]any, via string) {
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
		if got, want := signinStrings(oc["tools"]), signinStrings(org["tools"]); !slices.Equal(got, want) {
			t.Errorf("claims org.tools = %v; want %v as in the answer", got, want)
		}
	}
}

// signinJWT splits a compact JWS into its decoded header and claims.
func signinJWT(t testing.TB, raw string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q has %d parts; want 3 (header.payload.signature)", raw, len(parts))
	}
	decode := func(what, s string) map[string]any {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("access token %s is not base64url: %v", what, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("access token %s %s is not a JSON object: %v", what, b, err)
		}
		return m
	}
	return decode("header", parts[0]), decode("payload", parts[1])
}

// signinAccessClaims returns the claims of an access token.
func signinAccessClaims(t testing.TB, raw string) map[string]any {
	t.Helper()
	_, c := signinJWT(t, raw)
	return c
}

// signinForge encodes header and claims and signs them with alg ("none",
// "HS256" or "HS512") under key.
func signinForge(t testing.TB, header, claims map[string]any, alg string, key []byte) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(claims)
	var sum []byte
	switch alg {
	case "none":
		return input + "."
	case "HS256":
		m := hmac.New(sha256.New, key)
		m.Write([]byte(input))
		sum = m.Sum(nil)
	case "HS512":
		m := hmac.New(sha512.New, key)
		m.Write([]byte(input))
		sum = m.Sum(nil)
	default:
		t.Fatalf("signinForge: unknown alg %q", alg)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sum)
}

// signinMailToken waits up to 5 s for a message to `to` containing a link
// that starts with prefix and returns the token of the newest such link.
func signinMailToken(t testing.TB, env *testenv.Env, to, prefix string) string {
	t.Helper()
	return signinWaitMail(t, env, to, prefix, 1)
}

// signinWaitMail waits up to 5 s until the sink holds at least n messages to
// `to` with a link starting with prefix, and returns the newest link's token.
func signinWaitMail(t testing.TB, env *testenv.Env, to, prefix string, n int) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		texts := signinMailTexts(env, to, prefix)
		if len(texts) >= n {
			return testenv.TokenFromLink(t, texts[len(texts)-1], prefix)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mails to %s with a link %s… after 5s; want %d", len(texts), to, prefix, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// signinMailTexts returns the texts of the messages to `to` that contain
// prefix, oldest first.
func signinMailTexts(env *testenv.Env, to, prefix string) []string {
	var out []string
	for _, m := range env.Mail.Messages() {
		for _, rcpt := range m.To {
			if strings.EqualFold(rcpt, to) && strings.Contains(m.Text, prefix) {
				out = append(out, m.Text)
				break
			}
		}
	}
	return out
}

// signinMailsTo counts the messages the sink holds for to.
func signinMailsTo(env *testenv.Env, to string) int {
	n := 0
	for _, m := range env.Mail.Messages() {
		for _, rcpt := range m.To {
			if strings.EqualFold(rcpt, to) {
				n++
			}
		}
	}
	return n
}

// signinMagicToken requests a web magic link for email and returns the token
// of the mail that request sent.
func signinMagicToken(t testing.TB, env *testenv.Env, email string) string {
	t.Helper()
	before := len(signinMailTexts(env, email, signinWebMagic))
	signinCall(t, env, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}).Want(t, 200)
	return signinWaitMail(t, env, email, signinWebMagic, before+1)
}

// signinLogin signs in with email and password and returns the answer.
func signinLogin(t testing.TB, env *testenv.Env, email, password string) *testenv.Resp {
	t.Helper()
	return signinCall(t, env, "POST", "/v1/auth/login", "", map[string]string{"email": email, "password": password})
}

// signinRefresh presents a refresh token and returns the answer.
func signinRefresh(t testing.TB, env *testenv.Env, refresh string) *testenv.Resp {
	t.Helper()
	return signinCall(t, env, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh})
}

// signinRaw is a request safe to send from any goroutine: it reports
// failures as an error instead of failing the test.
func signinRaw(env *testenv.Env, method, path string, body any) (*testenv.Resp, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, env.URL+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := env.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return &testenv.Resp{Status: res.StatusCode, Header: res.Header, Body: data}, err
}

// signinAuthHeader sends GET path with a raw Authorization header.
func signinAuthHeader(t testing.TB, env *testenv.Env, path, authorization string) *testenv.Resp {
	t.Helper()
	req, err := http.NewRequest("GET", env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", authorization)
	res, err := env.Client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	r := &testenv.Resp{Status: res.StatusCode, Header: res.Header, Body: data}
	signinCheckAnswer(t, "GET "+path, r)
	return r
}
