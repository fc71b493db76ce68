package workspace

import "testing"

func TestNormalizeDomain(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"  Example.COM  ", "example.com"},
		{"https://www.example.com/path?q=1", "example.com"},
		{"http://example.com:8080/", "example.com"},
		{"example.com.", "example.com"},
		{"www.example.co.uk", "example.co.uk"},
		{"Bücher.example", "xn--bcher-kva.example"},
		{"https://www.Bücher.EXAMPLE./x", "xn--bcher-kva.example"},
		{"sub.example.org", "sub.example.org"},
	} {
		got, err := NormalizeDomain(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "   ", "localhost", "exa mple.com", "-bad.com", "127.0.0.1", "https://", "a..b.com", "ex_ample.com"} {
		if got, err := NormalizeDomain(bad); err == nil {
			t.Errorf("NormalizeDomain(%q) = %q, nil; want an error", bad, got)
		}
	}
}

func TestPublicEmailDomains(t *testing.T) {
	for _, d := range []string{"gmail.com", "outlook.com", "yahoo.com", "icloud.com", "proton.me"} {
		if !IsPublicEmailDomain(d) {
			t.Errorf("IsPublicEmailDomain(%q) = false", d)
		}
	}
	if IsPublicEmailDomain("example.com") {
		t.Error("IsPublicEmailDomain(example.com) = true")
	}
}
