package testenv

import (
	"encoding/json"
	"mime"
	"regexp"
	"strings"
	"testing"
)

// Case is one row of an endpoint's scenario table: a request and the
// answer it must get.
type Case struct {
	Name   string
	Method string
	Path   string
	Token  string // the bearer token; "" sends none
	Body   any    // marshalled to JSON unless a string or []byte; nil sends no body
	Want   int    // the status
	// Check, when set, checks the answer beyond its status.
	Check func(t *testing.T, r *Resp)
	// Before, when set, runs first (e.g. to publish a DNS record).
	Before func(t *testing.T)
}

// RunCases runs each case as a subtest, in order (a case may rely on the
// ones before it): the request goes through Call, so every answer is also
// held to CheckAnswer, then its status and Check are checked.
func (e *Env) RunCases(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Before != nil {
				c.Before(t)
			}
			r := e.Call(t, c.Method, c.Path, c.Token, c.Body)
			if r.Status != c.Want {
				t.Fatalf("%s %s: status = %d, body %s; want %d", c.Method, c.Path, r.Status, r.Body, c.Want)
			}
			if c.Check != nil {
				c.Check(t, r)
			}
		})
	}
}

// Call is Do followed by CheckAnswer.
func (e *Env) Call(t testing.TB, method, path, bearer string, body any) *Resp {
	t.Helper()
	r := e.Do(t, method, path, bearer, body)
	CheckAnswer(t, method+" "+path, r)
	return r
}

// CheckAnswer checks the rules every API answer follows: JSON, an
// X-Request-Id, never a 5xx, and the error shape (CheckError) on every
// status outside 2xx.
func CheckAnswer(t testing.TB, what string, r *Resp) {
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
		CheckError(t, what, r)
	}
}

// CheckError checks an error answer's body is an object of exactly one
// non-empty string field "error".
func CheckError(t testing.TB, what string, r *Resp) {
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

// ErrorNames returns a check that the error message names each word (a
// 400 names the field at fault).
func ErrorNames(words ...string) func(t *testing.T, r *Resp) {
	return func(t *testing.T, r *Resp) {
		t.Helper()
		msg := r.Str("error")
		for _, w := range words {
			if !strings.Contains(msg, w) {
				t.Errorf("error = %q; want it to name %q", msg, w)
			}
		}
	}
}

// WantMessage checks a Message answer: {message: non-empty string}.
func WantMessage(t *testing.T, r *Resp) {
	t.Helper()
	if msg, ok := r.Get("message").(string); !ok || msg == "" {
		t.Errorf("body %s; want a non-empty string field \"message\"", r.Body)
	}
}

var seconds = regexp.MustCompile(`^[1-9][0-9]*$`)

// WantRetryAfter checks a 429 carries Retry-After as a positive number of
// seconds.
func WantRetryAfter(t *testing.T, r *Resp) {
	t.Helper()
	if ra := r.Header.Get("Retry-After"); !seconds.MatchString(ra) {
		t.Errorf("Retry-After = %q; want a positive number of seconds", ra)
	}
}
