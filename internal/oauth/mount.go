package oauth

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// Kernel is what the authorization server's routes need of the HTTP
// kernel (internal/web): its named per-IP limiters, the client address,
// and bearer token verification (UserInfo).
type Kernel interface {
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
	ClientIP(r *http.Request) string
	Authed(h func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error) http.Handler
}

// Mount serves the authorization server's JSON endpoints (RFC 6749 error
// bodies) and the protected resource metadata on m, with their CORS
// preflights; the consent and device pages are internal/pages'. It
// mounts nothing without a server.
func Mount(m *http.ServeMux, k Kernel, s *Server) {
	if s == nil {
		return
	}
	limited := func(l *ratelimit.Limiter, h http.Handler) http.Handler {
		if l == nil {
			return h
		}
		return s.Limit(func(r *http.Request) (bool, time.Duration) { return l.Allow(k.ClientIP(r)) }, h)
	}
	// Client registration writes a row per call; token and device
	// authorization are cheap, bounded like key exchange.
	register := k.Limiter("oauthRegister", 20, time.Minute)
	token := k.Limiter("oauthToken", 300, 100*time.Millisecond)
	m.Handle("GET /.well-known/oauth-authorization-server", s.HandleMetadata())
	m.Handle("GET /.well-known/openid-configuration", s.HandleMetadata())
	userinfo := s.HandleUserInfo(k)
	m.Handle("GET /oauth/userinfo", userinfo)
	m.Handle("POST /oauth/userinfo", userinfo)
	m.Handle("GET /.well-known/oauth-protected-resource", s.HandleResourceMetadata())
	m.Handle("GET /.well-known/oauth-protected-resource/{rest...}", s.HandleResourceMetadata())
	m.Handle("POST /oauth/register", limited(register, s.HandleRegister()))
	m.Handle("POST /oauth/token", limited(token, s.HandleToken()))
	m.Handle("POST /oauth/device/authorization", limited(token, s.HandleDeviceAuthorization()))
	m.Handle("POST /oauth/revoke", limited(token, s.HandleRevoke()))
	// Introspection is server to server (no CORS); only failed
	// authentications count against an address.
	m.Handle("POST /oauth/introspect", s.HandleIntrospect(k.Limiter("oauthIntrospectFailures", 20, time.Second), k.ClientIP))
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/oauth/userinfo", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/{rest...}", "/oauth/register", "/oauth/token", "/oauth/device/authorization", "/oauth/revoke"} {
		m.Handle("OPTIONS "+p, s.HandlePreflight())
	}
}
