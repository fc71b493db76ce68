package scim

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
)

// Kernel is what the module needs of the HTTP kernel (internal/web): a
// full session on a workspace's routes for the tokens, and a bare handler
// for the SCIM protocol, which authenticates its own bearer tokens and
// answers errors in SCIM's shape.
type Kernel interface {
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
	FullIn(param string, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	// StatusOf is the kernel's one table from error kinds to statuses.
	StatusOf(k gatehouse.Kind) int
}

// Mount serves /v1/orgs/{id}/scim-tokens and /scim/v2 on m; nothing
// without a service.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	if svc == nil {
		return
	}
	h := &handlers{svc: svc, status: k.StatusOf}
	m.Handle("GET /v1/orgs/{id}/scim-tokens", k.FullIn("id", h.handleTokens))
	m.Handle("POST /v1/orgs/{id}/scim-tokens", k.FullIn("id", h.handleCreateToken))
	m.Handle("DELETE /v1/orgs/{id}/scim-tokens/{tid}", k.FullIn("id", h.handleDeleteToken))
	mountProtocol(m, k, h)
}

// handlers are the module's HTTP handlers.
type handlers struct {
	svc    *Service
	status func(gatehouse.Kind) int
}
