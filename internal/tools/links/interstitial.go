package links

import (
	"bytes"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// A short link answered on a host of the accounts service (its base, API,
// web or forms URL) would make that origin an open redirector: anyone who
// signs up can create a link there to a phishing page. There the redirect
// shows a page naming the destination's host first, with a plain link to
// continue; only a short-link URL on another host, asked for on that host,
// redirects at once (docs/decisions.md).

// SetAccountsURLs names the URLs the accounts service answers on (base,
// API, web and forms URLs); a short-link URL on none of their hosts
// redirects directly.
func (s *Service) SetAccountsURLs(urls ...string) {
	s.ours = map[string]bool{}
	for _, u := range urls {
		if h := hostOf(u); h != "" {
			s.ours[h] = true
		}
	}
}

// Direct reports whether a short link asked for on host (the request's
// Host) redirects at once: only on the short-link URL's own host, when
// that is not one of the accounts service's.
func (s *Service) Direct(host string) bool {
	base := hostOf(s.base)
	if base == "" || s.ours[base] {
		return false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.EqualFold(strings.TrimSuffix(host, "."), base)
}

// hostOf is the lower-case host name of a URL, without its port.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// displayHost is the host a visitor is shown: in its ASCII form, so that
// a look-alike internationalized name shows as the punycode it is.
func displayHost(dest string) string {
	u, err := url.Parse(dest)
	if err != nil {
		return ""
	}
	h := u.Hostname()
	if a, err := idna.Lookup.ToASCII(h); err == nil {
		h = a
	}
	return strings.ToLower(h)
}

var interstitialPage = template.Must(template.New("leaving").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>This link leads to {{.Host}}</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/gatehouse.css">
<link rel="stylesheet" href="/assets/brand.css">
</head>
<body>
<main id="main">
<h1>This link leads to {{.Host}}</h1>
<p>You followed a short link. It was made by someone who uses this service, which does not vouch for where it leads. Continue only if you trust <strong>{{.Host}}</strong>.</p>
<p>Full address: <code>{{.URL}}</code></p>
<p><a class="button" href="{{.URL}}" rel="noopener noreferrer nofollow">Continue to {{.Host}}</a></p>
</main>
</body>
</html>
`))

// interstitialCSP lets the page load only the hosted pages' stylesheets
// and icon (it answers on the accounts origin, which serves them), be
// framed by nothing and submit nowhere: it is text and one link.
const interstitialCSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// writeInterstitial answers a short link on the accounts origin: a page
// naming the destination's host with a link to it (the click is already
// counted, its id in the link); nothing redirects by itself.
func writeInterstitial(w http.ResponseWriter, dest string) error {
	var buf bytes.Buffer
	if err := interstitialPage.Execute(&buf, struct{ Host, URL string }{displayHost(dest), dest}); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", interstitialCSP)
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(buf.Bytes())
	return err
}
