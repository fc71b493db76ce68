package tasks

import (
	"encoding/json"
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

// Mount serves the Tasks tool API of TOOLS.md under /tasks/v1/ on m; it
// mounts nothing without a service, so the kernel's generic tool answer
// serves those paths.
func Mount(m *http.ServeMux, k Kernel, svc *Service) {
	if svc == nil {
		return
	}
	h := &handlers{svc: svc}
	// Each route declares what it does: read (the tool's :read scope) or
	// write (its :write scope), checked by the kernel for tool-scoped tokens.
	read, write := gatehouse.Read, gatehouse.Write
	t := func(access gatehouse.Access, fn func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler {
		return k.Tool(Tool, access, fn)
	}
	m.Handle("GET /tasks/v1/teams/{teamId}/states", t(read, h.handleStates))
	m.Handle("POST /tasks/v1/issues", t(write, h.handleCreateIssue))
	m.Handle("GET /tasks/v1/issues", t(read, h.handleIssues))
	m.Handle("GET /tasks/v1/issues/{id}", t(read, h.handleIssue))
	m.Handle("PATCH /tasks/v1/issues/{id}", t(write, h.handleUpdateIssue))
	m.Handle("DELETE /tasks/v1/issues/{id}", t(write, h.handleDeleteIssue))
	m.Handle("POST /tasks/v1/issues/{id}/restore", t(write, h.handleRestoreIssue))
}

// handlers are the module's HTTP handlers; each decodes, calls one method
// of svc and writes the answer.
type handlers struct {
	svc *Service
}

// handleStates handles "GET /tasks/v1/teams/{teamId}/states".
func (h *handlers) handleStates(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	states, err := h.svc.States(r.Context(), p, r.PathValue("teamId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"states": httpjson.Each(states, toState)})
	return nil
}

// decodeIssue reads the body of a create or update: the fields present,
// checked by DecodeInput.
func decodeIssue(r *http.Request) (*Input, error) {
	raw := map[string]json.RawMessage{}
	if err := httpjson.Decode(r, &raw); err != nil {
		return nil, err
	}
	return DecodeInput(raw)
}

// handleCreateIssue handles "POST /tasks/v1/issues".
func (h *handlers) handleCreateIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	in, err := decodeIssue(r)
	if err != nil {
		return err
	}
	i, err := h.svc.Create(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}

// handleIssues handles "GET /tasks/v1/issues".
func (h *handlers) handleIssues(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	q := r.URL.Query()
	deleted := false
	switch q.Get("deleted") {
	case "", "false":
	case "true":
		deleted = true
	default:
		return gatehouse.Invalid("deleted must be true or false")
	}
	list, err := h.svc.List(r.Context(), p, q.Get("teamId"), deleted)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issues": httpjson.Each(list, toIssue)})
	return nil
}

// handleIssue handles "GET /tasks/v1/issues/{id}".
func (h *handlers) handleIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	i, err := h.svc.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}

// handleUpdateIssue handles "PATCH /tasks/v1/issues/{id}".
func (h *handlers) handleUpdateIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	in, err := decodeIssue(r)
	if err != nil {
		return err
	}
	i, err := h.svc.Update(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}

// handleDeleteIssue handles "DELETE /tasks/v1/issues/{id}".
func (h *handlers) handleDeleteIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "issue deleted"})
	return nil
}

// handleRestoreIssue handles "POST /tasks/v1/issues/{id}/restore".
func (h *handlers) handleRestoreIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	i, err := h.svc.Restore(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}
