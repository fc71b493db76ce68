package sign

import (
	"net/http"
	"strconv"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// Kernel is what the handlers need from the HTTP kernel (internal/web):
// Tool wraps h as a route of the named tool (a valid token, the caller's
// live membership, the tool switched on, the WWW-Authenticate challenge);
// Public wraps a route that needs no token, a recipient's signing link
// carrying its own; both write the error h returns in the API's error
// shape. BodyLimit lets one route take bodies over the kernel's bound.
type Kernel interface {
	Tool(tool string, access gatehouse.Access, h func(http.ResponseWriter, *http.Request, *gatehouse.Principal) error) http.Handler
	Public(h func(http.ResponseWriter, *http.Request) error) http.Handler
	BodyLimit(pattern string, n int64)
}

// maxDocumentUpload bounds the multipart body of a document create: the
// PDF (MaxFile) and its description.
const maxDocumentUpload = MaxFile + 1<<20

// Mount serves the Sign tool API of TOOLS.md under /sign/v1/ on m; it
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
	m.Handle("POST /sign/v1/documents", t(write, h.handleCreateDocument))
	k.BodyLimit("POST /sign/v1/documents", maxDocumentUpload) // a PDF
	m.Handle("GET /sign/v1/documents", t(read, h.handleDocuments))
	m.Handle("GET /sign/v1/documents/{id}", t(read, h.handleDocument))
	m.Handle("PATCH /sign/v1/documents/{id}", t(write, h.handlePatchDocument))
	m.Handle("POST /sign/v1/documents/{id}/send", t(write, h.handleSendDocument))
	m.Handle("POST /sign/v1/documents/{id}/void", t(write, h.handleVoidDocument))
	m.Handle("POST /sign/v1/documents/{id}/duplicate", t(write, h.handleDuplicateDocument))
	m.Handle("DELETE /sign/v1/documents/{id}/fields/{fieldId}", t(write, h.handleDeleteField))
	m.Handle("GET /sign/v1/documents/{id}/recipients/{rid}/signing-link", t(read, h.handleSigningLink))
	m.Handle("GET /sign/v1/documents/{id}/file", t(read, h.handleDocumentFile))
	m.Handle("GET /sign/v1/public/sign", k.Public(h.handlePublicView))
	m.Handle("POST /sign/v1/public/sign", k.Public(h.handlePublicSign))
	m.Handle("POST /sign/v1/public/decline", k.Public(h.handlePublicDecline))
}

// handlers are the module's HTTP handlers; each decodes, calls one method
// of svc and writes the answer.
type handlers struct {
	svc *Service
}

// handleCreateDocument handles "POST /sign/v1/documents": a multipart body
// with the PDF and the document's JSON description.
func (h *handlers) handleCreateDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	pdf, in, err := decodeCreate(r)
	if err != nil {
		return err
	}
	d, err := h.svc.Create(r.Context(), p, pdf, in)
	return h.writeDocument(w, d, err)
}

// handleDocuments handles "GET /sign/v1/documents".
func (h *handlers) handleDocuments(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ds, err := h.svc.List(r.Context(), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"documents": httpjson.Each(ds, h.toDocument)})
	return nil
}

// writeDocument writes d as the answer of a document operation, or
// returns the operation's error.
func (h *handlers) writeDocument(w http.ResponseWriter, d *Document, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"document": h.toDocument(d)})
	return nil
}

// handleDocument handles "GET /sign/v1/documents/{id}".
func (h *handlers) handleDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := h.svc.Get(r.Context(), p, r.PathValue("id"))
	return h.writeDocument(w, d, err)
}

// handleSendDocument handles "POST /sign/v1/documents/{id}/send".
func (h *handlers) handleSendDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := h.svc.Send(r.Context(), p, r.PathValue("id"))
	return h.writeDocument(w, d, err)
}

// handleVoidDocument handles "POST /sign/v1/documents/{id}/void".
func (h *handlers) handleVoidDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Reason string `json:"reason"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, err := h.svc.Void(r.Context(), p, r.PathValue("id"), in.Reason)
	return h.writeDocument(w, d, err)
}

// handleDuplicateDocument handles "POST /sign/v1/documents/{id}/duplicate".
func (h *handlers) handleDuplicateDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name *string `json:"name"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, err := h.svc.Duplicate(r.Context(), p, r.PathValue("id"), in.Name)
	return h.writeDocument(w, d, err)
}

// handleDeleteField handles "DELETE /sign/v1/documents/{id}/fields/{fieldId}".
func (h *handlers) handleDeleteField(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := h.svc.DeleteField(r.Context(), p, r.PathValue("id"), r.PathValue("fieldId"))
	return h.writeDocument(w, d, err)
}

// handleSigningLink handles
// "GET /sign/v1/documents/{id}/recipients/{rid}/signing-link".
func (h *handlers) handleSigningLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	link, err := h.svc.SigningLink(r.Context(), p, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"url": link})
	return nil
}

// handleDocumentFile handles "GET /sign/v1/documents/{id}/file": the PDF
// itself, not JSON.
func (h *handlers) handleDocumentFile(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := h.svc.File(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Length", strconv.Itoa(len(d.File)))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(d.File)
	return nil
}

// handlePublicView handles "GET /sign/v1/public/sign?token=…": what a
// recipient's signing link shows, with no bearer token.
func (h *handlers) handlePublicView(w http.ResponseWriter, r *http.Request) error {
	d, rc, err := h.svc.View(r.Context(), r.URL.Query().Get("token"))
	return writePublicView(w, d, rc, err)
}

// handlePublicSign handles "POST /sign/v1/public/sign?token=…": the
// recipient fills their fields and signs.
func (h *handlers) handlePublicSign(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Values map[string]string `json:"values"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, rc, err := h.svc.Sign(r.Context(), r.URL.Query().Get("token"), in.Values)
	return writePublicView(w, d, rc, err)
}

// handlePublicDecline handles "POST /sign/v1/public/decline?token=…".
func (h *handlers) handlePublicDecline(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Reason string `json:"reason"`
	}
	if err := httpjson.Decode(r, &in); err != nil {
		return err
	}
	d, rc, err := h.svc.Decline(r.Context(), r.URL.Query().Get("token"), in.Reason)
	return writePublicView(w, d, rc, err)
}

// writePublicView writes what the recipient rc sees of d as the answer of
// a public operation, or returns the operation's error.
func writePublicView(w http.ResponseWriter, d *Document, rc *Recipient, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, publicView(d, rc))
	return nil
}
