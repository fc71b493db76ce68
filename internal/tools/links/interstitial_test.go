package links_test

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// continueLink is the href of the interstitial's one link, unescaped.
var continueLink = regexp.MustCompile(`<a class="button" href="([^"]*)"`)

// interstitial checks that res is the page shown before a short link
// leaves the accounts origin for host, and returns its body and the
// address its link continues to.
func interstitial(t *testing.T, what string, res *http.Response, host string) (string, *url.URL) {
	t.Helper()
	b, _ := io.ReadAll(res.Body)
	body := string(b)
	if res.StatusCode != http.StatusOK || res.Header.Get("Location") != "" {
		t.Fatalf("%s: %d, Location %q; want 200 and no redirect\n%s", what, res.StatusCode, res.Header.Get("Location"), body)
	}
	for name, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		"X-Robots-Tag":            "noindex, nofollow",
		"X-Frame-Options":         "DENY",
		"Cache-Control":           "no-store",
		"Referrer-Policy":         "no-referrer",
	} {
		if got := res.Header.Get(name); got != want {
			t.Errorf("%s: %s = %q; want %q", what, name, got, want)
		}
	}
	for _, want := range []string{"This link leads to " + host, "Continue to " + host, `<meta name="robots" content="noindex, nofollow">`} {
		if !strings.Contains(body, want) {
			t.Errorf("%s: the page lacks %q:\n%s", what, want, body)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(strings.ToLower(body), "http-equiv") {
		t.Errorf("%s: the page runs a script or redirects by itself:\n%s", what, body)
	}
	m := continueLink.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s: no link to continue:\n%s", what, body)
	}
	u, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatalf("%s: link %q: %v", what, m[1], err)
	}
	return body, u
}

// TestShortLinkInterstitial: on the accounts origin (the default
// {api_url}/l) a short link is no open redirector: it answers a page that
// names the destination's host, escapes everything the link's creator
// chose, and continues only by a plain link that carries the click's id;
// the click is counted once, on that view. A short-link URL on another
// origin redirects at once there, but the same route asked for on the
// accounts host still shows the page.
func TestShortLinkInterstitial(t *testing.T) {
	testenv.RunWith(t, testenv.Options{ShortLinksOnAccounts: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		hostile := `https://evil.example/login?next="><script>alert(1)</script>&x=<b>y</b>`
		r := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": hostile}).Want(t, 200)
		code, id := r.Str("link.shortCode"), r.Str("link.id")
		if r.Str("link.shortUrl") != env.URL+"/l/"+code {
			t.Fatalf("shortUrl = %q; want it on the accounts origin", r.Str("link.shortUrl"))
		}
		body, next := interstitial(t, "hostile destination", env.Follow(t, code), "evil.example")
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>y</b>") || !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("the destination is not escaped:\n%s", body)
		}
		click := next.Query().Get("svc_click")
		if next.Scheme != "https" || next.Host != "evil.example" || next.Path != "/login" || click == "" || next.Query().Get("next") != `"><script>alert(1)</script>` {
			t.Errorf("continue link = %q; want the destination with svc_click", next)
		}
		if n := env.Do(t, "GET", "/links/v1/links/"+id, owner.Token, nil).Want(t, 200).Get("link.clicks"); n != float64(1) {
			t.Errorf("clicks after one view = %v; want 1", n)
		}
		env.Do(t, "POST", "/links/v1/conversions", owner.Token, map[string]any{"clickId": click, "name": "signup"}).Want(t, 200)

		// A look-alike internationalized host is named as the punycode it is.
		r = env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://\u0430pple.example/"}).Want(t, 200)
		interstitial(t, "look-alike host", env.Follow(t, r.Str("link.shortCode")), "xn--pple-43d.example")
	})
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		code := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/x"}).Want(t, 200).Str("link.shortCode")
		res := env.Follow(t, code) // on links.test, the short-link URL's own host
		loc, _ := url.Parse(res.Header.Get("Location"))
		if res.StatusCode != http.StatusFound || loc.Host != "example.com" || loc.Query().Get("svc_click") == "" {
			t.Fatalf("short link on its own origin: %d to %q; want 302 to the destination", res.StatusCode, res.Header.Get("Location"))
		}
		accounts, _ := url.Parse(env.URL)
		interstitial(t, "short link asked for on the accounts host", env.FollowOn(t, accounts.Host, code), "example.com")
	})
}
