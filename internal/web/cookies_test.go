package web_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/web"
)

// TestSecureCookies: cookies lose Secure only on plain http at a loopback
// host; an https URL, any other host or a malformed URL keeps it.
func TestSecureCookies(t *testing.T) {
	for url, want := range map[string]bool{
		"https://accounts.example.com": true,
		"http://accounts.example.com":  true,
		"http://localhost:8080":        false,
		"http://127.0.0.1:8080":        false,
		"http://[::1]:8080":            false,
		"http://10.0.0.5:8080":         true,
		"https://127.0.0.1":            true,
		"::not a url":                  true,
	} {
		if got := web.SecureCookies(url); got != want {
			t.Errorf("SecureCookies(%q) = %v; want %v", url, got, want)
		}
	}
}
