package forms

import (
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// Kernel is what the handlers need from the HTTP kernel (internal/web):
// Tool wraps h as a route of the named tool (a valid token, the caller's
// live membership, the tool switched on, the WWW-Authenticate challenge);
// PerIP wraps a route that needs no token and limits it per client IP
// with a limiter from Limiter (nil when the service runs without abuse
// limits); both write the error h returns in the API's error shape.
type Kernel interface {
	Tool(tool string, access gatehouse.Access, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Limiter(name string, burst int, every time.Duration) *ratelimit.Limiter
	PerIP(l *ratelimit.Limiter, h func(http.ResponseWriter, *http.Request) error) http.Handler
}

// Mount serves the Forms tool API of TOOLS.md under /forms/v1/ on m, and
// the public submit endpoint under /forms/f/, the path of the default
// GATEHOUSE_FORMS_URL ({api_url}/forms). It mounts nothing without a
// service, so the kernel's generic tool answer serves those paths.
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
	m.Handle("POST /forms/v1/forms", t(write, h.handleCreateForm))
	m.Handle("GET /forms/v1/forms", t(read, h.handleForms))
	m.Handle("GET /forms/v1/forms/{id}", t(read, h.handleForm))
	m.Handle("PATCH /forms/v1/forms/{id}", t(write, h.handleUpdateForm))
	m.Handle("GET /forms/v1/forms/{id}/submissions", t(read, h.handleSubmissions))
	m.Handle("GET /forms/v1/forms/{id}/destinations", t(read, h.handleDestinations))
	m.Handle("POST /forms/v1/forms/{id}/destinations", t(write, h.handleAddDestination))
	m.Handle("DELETE /forms/v1/forms/{id}/destinations/{did}", t(write, h.handleDeleteDestination))
	// A site's visitors share nothing but the form, so the limit is per IP
	// and generous.
	m.Handle("POST /forms/f/{id}", corsOpen(k.PerIP(k.Limiter("formSubmit", 30, 2*time.Second), h.handleSubmit)))
	m.HandleFunc("OPTIONS /forms/f/{id}", handleSubmitPreflight)
}

// handlers are the module's HTTP handlers; each decodes, calls one method
// of svc and writes the answer.
type handlers struct {
	svc *Service
}

// handleCreateForm handles "POST /forms/v1/forms".
func (h *handlers) handleCreateForm(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in CreateInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	f, err := h.svc.Create(r.Context(), p, &in)
	return h.writeForm(w, f, err)
}

// handleForms handles "GET /forms/v1/forms".
func (h *handlers) handleForms(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	fs, err := h.svc.List(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"forms": httpjson.Each(fs, h.toForm)})
	return nil
}

// handleForm handles "GET /forms/v1/forms/{id}".
func (h *handlers) handleForm(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	f, err := h.svc.Get(r.Context(), p, r.PathValue("id"))
	return h.writeForm(w, f, err)
}

// handleUpdateForm handles "PATCH /forms/v1/forms/{id}".
func (h *handlers) handleUpdateForm(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in UpdateInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	f, err := h.svc.Update(r.Context(), p, r.PathValue("id"), &in)
	return h.writeForm(w, f, err)
}

// writeForm writes f as the answer of a form operation, or returns the
// operation's error.
func (h *handlers) writeForm(w http.ResponseWriter, f *Form, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"form": h.toForm(f)})
	return nil
}

// handleSubmissions handles "GET /forms/v1/forms/{id}/submissions".
func (h *handlers) handleSubmissions(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	subs, err := h.svc.Submissions(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"submissions": httpjson.Each(subs, toSubmission)})
	return nil
}

// handleDestinations handles "GET /forms/v1/forms/{id}/destinations".
func (h *handlers) handleDestinations(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ds, err := h.svc.Destinations(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"destinations": httpjson.Each(ds, toDestination)})
	return nil
}

// handleAddDestination handles "POST /forms/v1/forms/{id}/destinations".
func (h *handlers) handleAddDestination(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in DestinationInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, err := h.svc.AddDestination(r.Context(), p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"destination": toDestination(d)})
	return nil
}

// handleDeleteDestination handles
// "DELETE /forms/v1/forms/{id}/destinations/{did}".
func (h *handlers) handleDeleteDestination(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.DeleteDestination(r.Context(), p, r.PathValue("id"), r.PathValue("did")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "destination deleted"})
	return nil
}

// handleSubmit handles "POST /forms/f/{id}": a public submission from any
// site, with no bearer, in any of the bodies submission reads. A _next on
// an origin the form lists redirects the browser there; any other gets
// {ok: true}.
func (h *handlers) handleSubmit(w http.ResponseWriter, r *http.Request) error {
	data, err := submission(r)
	if err != nil {
		return err
	}
	next, err := h.svc.Submit(r.Context(), r.PathValue("id"), data)
	if err != nil {
		return err
	}
	if next != "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

// corsOpen lets any origin read the answer, errors (429 included) too.
func corsOpen(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		h.ServeHTTP(w, r)
	})
}

// handleSubmitPreflight handles "OPTIONS /forms/f/{id}", the CORS
// preflight of a JSON submission: any origin may POST.
func handleSubmitPreflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
