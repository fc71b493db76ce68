package webhooks

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// Kernel is what the handlers need from the HTTP kernel (internal/web):
// Tool wraps h as a route of the named tool (a valid token, the caller's
// live membership, the tool switched on, the WWW-Authenticate challenge)
// and writes the error h returns in the API's error shape.
type Kernel interface {
	Tool(tool string, access gatehouse.Access, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
}

// Mount serves the webhook management of the tools that have webhooks on
// m: Links under /links/v1/webhooks, with the test ping of spec 4.6, and
// Sign under /sign/v1/webhooks, without one. It mounts nothing without a
// service, so the kernel's generic tool answer serves those paths.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	if svc == nil {
		return
	}
	l, s := &handlers{svc: svc, tool: Links}, &handlers{svc: svc, tool: Sign}
	// Each route declares what it does: read (the tool's :read scope) or
	// write (its :write scope), checked by the kernel for tool-scoped tokens.
	read, write := gatehouse.Read, gatehouse.Write
	t := func(h *handlers, access gatehouse.Access, fn func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler {
		return k.Tool(h.tool.Name, access, fn)
	}
	m.Handle("POST /links/v1/webhooks", t(l, write, l.handleCreateWebhook))
	m.Handle("GET /links/v1/webhooks", t(l, read, l.handleWebhooks))
	m.Handle("PATCH /links/v1/webhooks/{id}", t(l, write, l.handleUpdateWebhook))
	m.Handle("DELETE /links/v1/webhooks/{id}", t(l, write, l.handleDeleteWebhook))
	m.Handle("POST /links/v1/webhooks/{id}/test", t(l, write, l.handlePingWebhook))

	m.Handle("POST /sign/v1/webhooks", t(s, write, s.handleCreateWebhook))
	m.Handle("GET /sign/v1/webhooks", t(s, read, s.handleWebhooks))
	m.Handle("PATCH /sign/v1/webhooks/{id}", t(s, write, s.handleUpdateWebhook))
	m.Handle("DELETE /sign/v1/webhooks/{id}", t(s, write, s.handleDeleteWebhook))
}

// handlers are one tool's webhook handlers; each decodes, calls one method
// of svc for tool and writes the answer.
type handlers struct {
	svc  *Service
	tool *Tool
}

// handleCreateWebhook handles "POST /{links,sign}/v1/webhooks": the new
// webhook with its secret, shown this once.
func (h *handlers) handleCreateWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in Input
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	hook, err := h.svc.Create(r.Context(), h.tool, p, &in)
	if err != nil {
		return err
	}
	out := toWebhook(hook)
	out.Secret = hook.Secret // shown once, here
	httpjson.Write(w, http.StatusOK, map[string]any{"webhook": out})
	return nil
}

// handleWebhooks handles "GET /{links,sign}/v1/webhooks": the workspace's
// webhooks of the tool.
func (h *handlers) handleWebhooks(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	hs, err := h.svc.List(r.Context(), h.tool, p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"webhooks": httpjson.Each(hs, toWebhook)})
	return nil
}

// handleUpdateWebhook handles "PATCH /{links,sign}/v1/webhooks/{id}".
func (h *handlers) handleUpdateWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in Input
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	hook, err := h.svc.Update(r.Context(), h.tool, p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"webhook": toWebhook(hook)})
	return nil
}

// handleDeleteWebhook handles "DELETE /{links,sign}/v1/webhooks/{id}".
func (h *handlers) handleDeleteWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.Delete(r.Context(), h.tool, p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "webhook deleted"})
	return nil
}

// handlePingWebhook handles "POST /links/v1/webhooks/{id}/test": a ping
// event sent to the webhook, active or not.
func (h *handlers) handlePingWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if _, err := h.svc.Ping(r.Context(), h.tool, p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "ping sent"})
	return nil
}
