package testenv

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Browser is a cookie-keeping HTTP client that does not follow redirects,
// standing in for a person on the hosted pages. Client may be given
// another Transport (DialFrom) to come from another address.
type Browser struct {
	env    *Env
	Client *http.Client
}

// Page is one answer a Browser got.
type Page struct {
	Status int
	Header http.Header
	Body   string
}

// Location is the page's redirect target.
func (p *Page) Location() string { return p.Header.Get("Location") }

// NewBrowser returns a browser with an empty cookie jar.
func (e *Env) NewBrowser(t testing.TB) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &Browser{env: e, Client: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if strings.HasPrefix(e.URL, "https://") {
		// Options.TLS: trust the test server's certificate.
		b.Client.Transport = e.Client.Transport
	}
	return b
}

// Do sends method rawURL (a path of the env's server or a whole URL),
// with form as a url-encoded body when it is not nil, and reads the answer.
func (b *Browser) Do(t testing.TB, method, rawURL string, form url.Values) *Page {
	t.Helper()
	return b.send(t, method, rawURL, form, "")
}

// PostCrossSite submits form to rawURL as a page of another site would
// (Sec-Fetch-Site: cross-site), which the pages' cross-origin guard refuses.
func (b *Browser) PostCrossSite(t testing.TB, rawURL string, form url.Values) *Page {
	t.Helper()
	return b.send(t, "POST", rawURL, form, "cross-site")
}

// send is Do with the Sec-Fetch-Site header a browser would add (none
// when site is "").
func (b *Browser) send(t testing.TB, method, rawURL string, form url.Values, site string) *Page {
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
	if site != "" {
		req.Header.Set("Sec-Fetch-Site", site)
	}
	res, err := b.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return &Page{Status: res.StatusCode, Header: res.Header, Body: string(data)}
}

// Get opens rawURL.
func (b *Browser) Get(t testing.TB, rawURL string) *Page {
	t.Helper()
	return b.Do(t, "GET", rawURL, nil)
}

// Post submits form to rawURL.
func (b *Browser) Post(t testing.TB, rawURL string, form url.Values) *Page {
	t.Helper()
	return b.Do(t, "POST", rawURL, form)
}

// From returns a browser with b's cookies whose requests come from client
// IP ip (DialFrom), so per-IP and per-session limits can be told apart.
func (b *Browser) From(t testing.TB, ip string) *Browser {
	c := *b.Client
	c.Transport = DialFrom(t, ip)
	return &Browser{env: b.env, Client: &c}
}
