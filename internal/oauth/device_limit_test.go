package oauth_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestDeviceCodeEntryLimit: wrong user codes on the device page are limited
// per IP and per browser session (RFC 8628 §5.1): 10, then one a minute,
// answered 429 with the error page and Retry-After.
func TestDeviceCodeEntryLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"grant_types": []string{deviceGrant}})
		good := "/device?user_code=" + postForm(t, env, "/oauth/device/authorization", url.Values{"client_id": {clientID}}).Want(t, 200).Str("user_code")
		const wrong = "/device?user_code=BBBB-BBBB"
		b := env.NewBrowser(t)
		signIn(t, b, a)
		for i := 1; i <= 10; i++ {
			p := b.Get(t, wrong)
			if p.Status != 404 {
				t.Fatalf("wrong code %d: status %d; want 404", i, p.Status)
			}
			// The device page again, the code kept, saying why: never
			// the generic error page.
			if i == 1 && (!strings.Contains(p.Body, `value="BBBB-BBBB"`) || !strings.Contains(p.Body, "That code is not valid or has expired")) {
				t.Fatalf("wrong code: body %s; want the device page with the code and why", p.Body)
			}
		}
		want429 := func(name string, p *testenv.Page) {
			t.Helper()
			secs, err := strconv.Atoi(p.Header.Get("Retry-After"))
			if p.Status != 429 || err != nil || secs < 1 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("%s: status %d, Retry-After %q, type %q; want a 429 page with Retry-After", name, p.Status,
					p.Header.Get("Retry-After"), p.Header.Get("Content-Type"))
			}
		}
		want429("11th wrong code", b.Get(t, wrong))
		want429("a right code from the same session", b.Get(t, good))
		want429("posting a code", b.Post(t, "/device", url.Values{"user_code": {"BBBB-BBBB"}, "decision": {"approve"}, "org_id": {a.OrgID}}))

		other := env.NewBrowser(t)
		signIn(t, other, a)
		want429("another session from the same IP", other.Get(t, good))
		want429("the same session from another IP", b.From(t, "127.0.0.2").Get(t, good))
		fresh := env.NewBrowser(t).From(t, "127.0.0.3")
		signIn(t, fresh, a)
		if p := fresh.Get(t, good); p.Status != 200 || !strings.Contains(p.Body, `name="org_id"`) {
			t.Fatalf("another session from another IP: status %d; want the device consent page", p.Status)
		}
		secs, _ := strconv.Atoi(b.Get(t, good).Header.Get("Retry-After"))
		env.Clock.Advance(time.Duration(secs) * time.Second)
		if p := b.Get(t, good); p.Status != 200 {
			t.Fatalf("after Retry-After: status %d; want the device consent page", p.Status)
		}
	})
}
