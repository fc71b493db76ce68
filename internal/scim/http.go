package scim

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// limitFailed bounds the failed SCIM bearer attempts of one client IP:
// burst, then one more every n seconds (docs/decisions.md).
var limitFailed = [2]int{20, 3}

// Kernel is what the module needs of the HTTP kernel (internal/web): a
// full session on a workspace's routes for the tokens, and a bare handler
// for the SCIM protocol, which authenticates its own bearer tokens and
// answers errors in SCIM's shape.
type Kernel interface {
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
	FullIn(param string, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	// StatusOf is the kernel's one table from error kinds to statuses.
	StatusOf(k gatehouse.Kind) int
	// Limiter is the kernel's named limiter (nil, allowing everything,
	// when the service runs without abuse limits).
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
	// ClientIP is the address of r's client that limits record.
	ClientIP(r *http.Request) string
}

// Mount serves /v1/orgs/{id}/scim-tokens, /v1/orgs/{id}/scim-settings and
// /scim/v2 on m; nothing
// without a service.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	if svc == nil {
		return
	}
	h := &handlers{svc: svc, status: k.StatusOf, clientIP: k.ClientIP,
		failed: k.Limiter("scim_bearer_failed", limitFailed[0], time.Duration(limitFailed[1])*time.Second)}
	m.Handle("GET /v1/orgs/{id}/scim-tokens", k.FullIn("id", h.handleTokens))
	m.Handle("POST /v1/orgs/{id}/scim-tokens", k.FullIn("id", h.handleCreateToken))
	m.Handle("DELETE /v1/orgs/{id}/scim-tokens/{tid}", k.FullIn("id", h.handleDeleteToken))
	m.Handle("GET /v1/orgs/{id}/scim-settings", k.FullIn("id", h.handleSettings))
	m.Handle("PATCH /v1/orgs/{id}/scim-settings", k.FullIn("id", h.handleSetSettings))
	mountProtocol(m, k, h)
}

// handlers are the module's HTTP handlers.
type handlers struct {
	svc      *Service
	status   func(gatehouse.Kind) int
	clientIP func(*http.Request) string
	// failed counts the failed bearer attempts per client IP.
	failed *ratelimit.Limiter
}
