package links

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// Kernel is what the handlers need from the HTTP kernel (internal/web):
// Tool wraps h as a route of the named tool (a valid token, the caller's
// live membership, the tool switched on, the WWW-Authenticate challenge)
// and Public wraps a route that needs no token; both write the error h
// returns in the API's error shape.
type Kernel interface {
	Tool(tool string, access gatehouse.Access, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
}

// Mount serves the Links tool API of TOOLS.md under /links/v1/ on m, and
// the public redirect under /l/, the path of the default
// GATEHOUSE_SHORT_LINK_URL ({api_url}/l). It mounts nothing without a
// service, so the kernel's generic tool answer serves those paths. The
// Links webhooks are mounted by internal/webhooks.
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
	m.Handle("POST /links/v1/links", t(write, h.handleCreateLink))
	m.Handle("GET /links/v1/links", t(read, h.handleLinks))
	m.Handle("GET /links/v1/links/{id}", t(read, h.handleLink))
	m.Handle("PATCH /links/v1/links/{id}", t(write, h.handleUpdateLink))
	m.Handle("DELETE /links/v1/links/{id}", t(write, h.handleDeleteLink))
	m.Handle("POST /links/v1/conversions", t(write, h.handleConversion))
	m.Handle("GET /l/{code}", k.Public(h.handleFollow))
}

// handlers are the module's HTTP handlers; each decodes, calls one method
// of svc and writes the answer.
type handlers struct {
	svc *Service
}

// handleCreateLink handles "POST /links/v1/links".
func (h *handlers) handleCreateLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in Input
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	l, err := h.svc.Create(r.Context(), p, &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"link": h.toLink(l)})
	return nil
}

// handleLinks handles "GET /links/v1/links": the workspace's links.
func (h *handlers) handleLinks(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ls, err := h.svc.List(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"links": httpjson.Each(ls, h.toLink)})
	return nil
}

// handleLink handles "GET /links/v1/links/{id}".
func (h *handlers) handleLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	l, err := h.svc.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"link": h.toLink(l)})
	return nil
}

// handleUpdateLink handles "PATCH /links/v1/links/{id}".
func (h *handlers) handleUpdateLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in Input
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	l, err := h.svc.Update(r.Context(), p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"link": h.toLink(l)})
	return nil
}

// handleDeleteLink handles "DELETE /links/v1/links/{id}".
func (h *handlers) handleDeleteLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := h.svc.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"message": "link deleted"})
	return nil
}

// handleConversion handles "POST /links/v1/conversions": a conversion
// attributed to a click.
func (h *handlers) handleConversion(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in ConversionInput
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	c, err := h.svc.Convert(r.Context(), p, &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"conversion": toConversion(c)})
	return nil
}

// handleFollow handles "GET /l/{code}", the public short link: the click
// is counted and the destination gets its id in svc_click; 302 there on
// the short-link URL's own host when that is not the accounts service's
// (Service.Direct), else 200 with a page naming the destination's host and
// a link to it (interstitial.go); 404 when the link is unknown, inactive
// or archived.
func (h *handlers) handleFollow(w http.ResponseWriter, r *http.Request) error {
	to, err := h.svc.Follow(r.Context(), r.PathValue("code"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	if h.svc.Direct(r.Host) {
		http.Redirect(w, r, to, http.StatusFound)
		return nil
	}
	return writeInterstitial(w, to)
}
