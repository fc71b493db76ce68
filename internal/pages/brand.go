package pages

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Brand is what an operator sets to make the hosted pages theirs
// (GATEHOUSE_BRAND_*): the product name, a logo, the accent colour and
// links to support and terms. The zero value is Gatehouse's own.
type Brand struct {
	Name       string // product name; "" is Gatehouse
	LogoURL    string // absolute https URL or a path of this server; "" for none
	Accent     string // #rgb or #rrggbb; "" keeps the stylesheet's
	SupportURL string
	TermsURL   string
}

var accentPattern = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// CheckAccent accepts a hex colour (#rgb or #rrggbb), the one form that
// can go into the brand stylesheet without escaping.
func CheckAccent(s string) error {
	if s != "" && !accentPattern.MatchString(s) {
		return fmt.Errorf("want a hex colour such as #0b57d0, got %q", s)
	}
	return nil
}

// CheckBrandURL accepts an absolute http(s) URL or a path of this server.
func CheckBrandURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	ok := err == nil && u.User == nil && !strings.ContainsAny(s, " \"'<>\\") &&
		((u.Scheme == "https" || u.Scheme == "http") && u.Host != "" ||
			u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"))
	if !ok {
		return fmt.Errorf("want an http(s) URL or a path starting with /, got %q", s)
	}
	return nil
}

// withDefaults fills the product name.
func (b Brand) withDefaults() Brand {
	if strings.TrimSpace(b.Name) == "" {
		b.Name = "Gatehouse"
	}
	return b
}

// logoOrigin is the origin the CSP must allow images from for an external
// logo ("" for none or a local one).
func (b Brand) logoOrigin() string {
	u, err := url.Parse(b.LogoURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// css is the brand stylesheet: the accent colour as a custom property, so
// the pages need no inline style (the CSP forbids it).
func (b Brand) css() []byte {
	if b.Accent == "" {
		return []byte("/* no brand accent set */\n")
	}
	// The dark scheme keeps its own light accent: an operator's colour is
	// chosen for a light page and could vanish on a dark one.
	return []byte("@media (prefers-color-scheme: light) { :root { --accent: " + b.Accent + "; --accent-fg: " + textOn(b.Accent) + "; } }\n")
}

// textOn is black or white, whichever reads better on the hex colour c
// (WCAG relative luminance).
func textOn(c string) string {
	c = strings.TrimPrefix(c, "#")
	if len(c) == 3 {
		c = string([]byte{c[0], c[0], c[1], c[1], c[2], c[2]})
	}
	var lum float64
	for i, weight := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseUint(c[2*i:2*i+2], 16, 8)
		f := float64(v) / 255
		if f <= 0.03928 {
			f /= 12.92
		} else {
			f = math.Pow((f+0.055)/1.055, 2.4)
		}
		lum += weight * f
	}
	// Contrast with white (1.05/(L+0.05)) against with black ((L+0.05)/0.05).
	if 1.05/(lum+0.05) >= (lum+0.05)/0.05 {
		return "#fff"
	}
	return "#000"
}

// handleAsset serves an embedded asset with a day of caching.
func handleAsset(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(body)
	}
}
