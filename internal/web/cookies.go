package web

import (
	"net"
	"net/url"
)

// SecureCookies reports whether cookies for baseURL must be Secure: always
// but for plain http at a loopback host (development and tests), where
// browsers drop Secure cookies. The pages and SSO sign-in share it.
func SecureCookies(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
