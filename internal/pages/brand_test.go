package pages_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestBrand: the operator's name, logo, accent and links reach every page;
// an external logo's origin, and nothing else, joins the CSP's img-src.
func TestBrand(t *testing.T) {
	brand := pages.Brand{Name: "Acme <ID>", LogoURL: "https://cdn.acme.example/logo.svg", Accent: "#ffcc00",
		SupportURL: "https://help.acme.example/", TermsURL: "/terms"}
	testenv.RunWith(t, testenv.Options{Brand: brand}, func(t *testing.T, env *testenv.Env) {
		b := env.NewBrowser(t)
		for _, path := range []string{"/signin", "/signup", "/recover", "/auth/magic?token=x"} {
			res := b.Get(t, path)
			wantPage(t, path, res, 200, "· Acme &lt;ID&gt;</title>", `<img src="https://cdn.acme.example/logo.svg"`,
				`href="https://help.acme.example/">Support`, `href="/terms">Terms`, `href="/assets/brand.css"`)
			if strings.Contains(res.Body, "Gatehouse") {
				t.Fatalf("%s still says Gatehouse", path)
			}
			csp := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "img-src 'self' https://cdn.acme.example;") || strings.Count(csp, "acme") != 1 {
				t.Fatalf("%s: CSP %q", path, csp)
			}
		}
		css := b.Get(t, "/assets/brand.css")
		// A light accent gets black button text (WCAG contrast).
		if !strings.Contains(css.Body, "--accent: #ffcc00; --accent-fg: #000;") {
			t.Fatalf("brand.css = %q", css.Body)
		}
	})
}

// TestBrandChecks: the settings' validation.
func TestBrandChecks(t *testing.T) {
	for _, ok := range []string{"", "#abc", "#0B57D0"} {
		if err := pages.CheckAccent(ok); err != nil {
			t.Errorf("CheckAccent(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"red", "#abcd", "#12345g", "#fff;}", "0b57d0"} {
		if pages.CheckAccent(bad) == nil {
			t.Errorf("CheckAccent(%q) accepted", bad)
		}
	}
	for _, ok := range []string{"", "/logo.svg", "https://x.example/a.png", "http://x.example/"} {
		if err := pages.CheckBrandURL(ok); err != nil {
			t.Errorf("CheckBrandURL(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"javascript:alert(1)", "//x.example/a", "logo.svg", "https://u:p@x.example/", "data:image/png;base64,xx", `https://x.example/"a`, "https:///a"} {
		if pages.CheckBrandURL(bad) == nil {
			t.Errorf("CheckBrandURL(%q) accepted", bad)
		}
	}
}
