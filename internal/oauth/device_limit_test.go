package oauth_test

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// from returns a browser with b's cookies whose requests come from another
// loopback address, so per-IP and per-session limits can be told apart.
func (b *browser) from(ip string) *browser {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &browser{env: b.env, c: &http.Client{Jar: b.c.Jar, Timeout: b.c.Timeout, CheckRedirect: b.c.CheckRedirect,
		Transport: &http.Transport{DialContext: d.DialContext}}}
}

// TestDeviceCodeEntryLimit: wrong user codes on the device page are limited
// per IP and per browser session (RFC 8628 §5.1): 10, then one a minute,
// answered 429 with the error page and Retry-After.
func TestDeviceCodeEntryLimit(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		clientID := registerClient(t, env, map[string]any{"grant_types": []string{deviceGrant}})
		res, err := env.Client.PostForm(env.URL+"/oauth/device/authorization", url.Values{"client_id": {clientID}})
		if err != nil {
			t.Fatal(err)
		}
		good := "/device?user_code=" + readResp(t, res).Want(t, 200).Str("user_code")
		const wrong = "/device?user_code=BBBB-BBBB"
		b := newBrowser(t, env)
		b.signIn(t, a)
		for i := 1; i <= 10; i++ {
			if p := b.get(t, wrong); p.status != 404 {
				t.Fatalf("wrong code %d: status %d; want 404", i, p.status)
			}
		}
		want429 := func(name string, p *page) {
			t.Helper()
			secs, err := strconv.Atoi(p.header.Get("Retry-After"))
			if p.status != 429 || err != nil || secs < 1 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
				t.Fatalf("%s: status %d, Retry-After %q, type %q; want a 429 page with Retry-After", name, p.status,
					p.header.Get("Retry-After"), p.header.Get("Content-Type"))
			}
		}
		want429("11th wrong code", b.get(t, wrong))
		want429("a right code from the same session", b.get(t, good))
		want429("posting a code", b.post(t, "/device", url.Values{"user_code": {"BBBB-BBBB"}, "decision": {"approve"}, "org_id": {a.OrgID}}))

		other := newBrowser(t, env)
		other.signIn(t, a)
		want429("another session from the same IP", other.get(t, good))
		want429("the same session from another IP", b.from("127.0.0.2").get(t, good))
		fresh := newBrowser(t, env).from("127.0.0.3")
		fresh.signIn(t, a)
		if p := fresh.get(t, good); p.status != 200 || !strings.Contains(p.body, `name="org_id"`) {
			t.Fatalf("another session from another IP: status %d; want the device consent page", p.status)
		}
		secs, _ := strconv.Atoi(b.get(t, good).header.Get("Retry-After"))
		env.Clock.Advance(time.Duration(secs) * time.Second)
		if p := b.get(t, good); p.status != 200 {
			t.Fatalf("after Retry-After: status %d; want the device consent page", p.status)
		}
	})
}
