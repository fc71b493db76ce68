package web

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/sign"
)

// maxDocumentUpload bounds the multipart body of a document create: the
// PDF (sign.MaxFile) and its description.
const maxDocumentUpload = sign.MaxFile + 1<<20

// signRoutes serves the Sign tool API of TOOLS.md under /sign/v1/.
func (s *Server) signRoutes(m *http.ServeMux) {
	t := func(h AuthedFunc) http.Handler { return s.Tool(sign.Tool, h) }
	m.Handle("POST /sign/v1/documents", t(s.handleCreateDocument))
	s.BodyLimit("POST /sign/v1/documents", maxDocumentUpload) // a PDF
	m.Handle("GET /sign/v1/documents", t(s.handleDocuments))
	m.Handle("GET /sign/v1/documents/{id}", t(s.handleDocument))
	m.Handle("POST /sign/v1/documents/{id}/send", t(s.handleSendDocument))
	m.Handle("POST /sign/v1/documents/{id}/void", t(s.handleVoidDocument))
	m.Handle("POST /sign/v1/documents/{id}/duplicate", t(s.handleDuplicateDocument))
	m.Handle("DELETE /sign/v1/documents/{id}/fields/{fieldId}", t(s.handleDeleteField))
	m.Handle("GET /sign/v1/documents/{id}/recipients/{rid}/signing-link", t(s.handleSigningLink))
	m.Handle("GET /sign/v1/documents/{id}/file", t(s.handleDocumentFile))
	m.Handle("GET /sign/v1/public/sign", s.handle(s.handlePublicView))
	m.Handle("POST /sign/v1/public/sign", s.handle(s.handlePublicSign))
	m.Handle("POST /sign/v1/public/decline", s.handle(s.handlePublicDecline))
}

func (s *Server) toDocument(d *sign.Document) map[string]any {
	recipients := make([]map[string]any, len(d.Recipients))
	for k, r := range d.Recipients {
		rec := map[string]any{"id": r.ID, "name": r.Name, "email": r.Email, "role": r.Role, "status": r.Status,
			"orderIndex": r.OrderIndex, "signedAt": stampPtr(r.SignedAt), "viewedAt": stampPtr(r.ViewedAt),
			"declinedAt": stampPtr(r.DeclinedAt), "declineReason": optional(r.DeclineReason), "hasAccessCode": false,
			"signature": nil, "isGroup": false, "groupLabel": nil, "signedByName": nil, "signedByEmail": nil,
			"members": []any{}, "reassignedFromName": nil, "reassignedFromEmail": nil, "reassignReason": nil, "reassignedAt": nil}
		if r.Status == sign.Signed {
			rec["signedByName"], rec["signedByEmail"] = r.Name, r.Email
			for _, f := range d.Fields {
				if f.RecipientID == r.ID && f.Type == "signature" && f.Value != nil {
					rec["signature"] = *f.Value
				}
			}
		}
		recipients[k] = rec
	}
	fields := make([]map[string]any, len(d.Fields))
	for k, f := range d.Fields {
		fields[k] = map[string]any{"id": f.ID, "type": f.Type, "x": f.X, "y": f.Y, "width": f.Width, "height": f.Height,
			"page": f.Page, "required": f.Required, "label": f.Label, "value": f.Value, "recipientId": optional(f.RecipientID),
			"fileId": d.ID, "config": map[string]any{}}
	}
	return map[string]any{"id": d.ID, "name": d.Name, "url": s.sign.FileURL(d.ID), "status": d.Status, "signingMode": "parallel",
		"message": d.Message, "visibility": "private", "ownerId": d.OwnerID, "templateId": nil, "voidReason": optional(d.VoidReason),
		"notaryState": nil, "created": stamp(d.Created), "modified": stamp(d.Modified), "sentAt": stampPtr(d.SentAt),
		"completedAt": stampPtr(d.CompletedAt), "voidedAt": stampPtr(d.VoidedAt), "declinedAt": stampPtr(d.DeclinedAt),
		"expiresAt": nil, "lastRemindedAt": nil, "scheduledPurgeAt": nil, "size": d.Size, "pages": d.Pages, "autoRemindDays": 0,
		"hasFile": true, "hasFinalFile": false, // no signed PDF is rendered yet
		"legalHold": false, "requiresNotarization": false,
		"files": []map[string]any{{"id": d.ID, "name": d.Name, "position": 0, "size": d.Size, "pages": d.Pages,
			"created": stamp(d.Created), "status": "ready", "conversionError": nil}},
		"recipients": recipients, "fields": fields}
}

func (s *Server) handleCreateDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := r.ParseMultipartForm(4 << 20); err != nil {
		if httpjson.TooBig(err) {
			return err
		}
		return gatehouse.Invalid("the body must be multipart/form-data with a file (PDF) and a document (JSON)")
	}
	defer r.MultipartForm.RemoveAll()
	var in sign.CreateInput
	meta := r.FormValue("document")
	if httpjson.HasNUL([]byte(meta)) {
		return nulError()
	}
	if err := json.Unmarshal([]byte(meta), &in); err != nil {
		return gatehouse.Invalid("document must be a JSON object: name, message, recipients, fields")
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		return gatehouse.Invalid("file is required (a PDF)")
	}
	defer f.Close()
	pdf, err := io.ReadAll(io.LimitReader(f, sign.MaxFile+1))
	if err != nil {
		return gatehouse.Invalid("file could not be read")
	}
	d, err := s.sign.Create(r.Context(), p, pdf, &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"document": s.toDocument(d)})
	return nil
}

func (s *Server) handleDocuments(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ds, err := s.sign.List(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(ds))
	for k, d := range ds {
		out[k] = s.toDocument(d)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"documents": out})
	return nil
}

func (s *Server) writeDocument(w http.ResponseWriter, d *sign.Document, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"document": s.toDocument(d)})
	return nil
}

func (s *Server) handleDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := s.sign.Get(r.Context(), p, r.PathValue("id"))
	return s.writeDocument(w, d, err)
}

func (s *Server) handleSendDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := s.sign.Send(r.Context(), p, r.PathValue("id"))
	return s.writeDocument(w, d, err)
}

func (s *Server) handleVoidDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Reason string `json:"reason"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.sign.Void(r.Context(), p, r.PathValue("id"), in.Reason)
	return s.writeDocument(w, d, err)
}

func (s *Server) handleDuplicateDocument(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in struct {
		Name *string `json:"name"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.sign.Duplicate(r.Context(), p, r.PathValue("id"), in.Name)
	return s.writeDocument(w, d, err)
}

func (s *Server) handleDeleteField(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := s.sign.DeleteField(r.Context(), p, r.PathValue("id"), r.PathValue("fieldId"))
	return s.writeDocument(w, d, err)
}

func (s *Server) handleSigningLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	link, err := s.sign.SigningLink(r.Context(), p, r.PathValue("id"), r.PathValue("rid"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"url": link})
	return nil
}

func (s *Server) handleDocumentFile(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	d, err := s.sign.File(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Length", strconv.Itoa(len(d.File)))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(d.File)
	return nil
}

// publicView is what a recipient sees: the document, themselves, and the
// fields they fill.
func (s *Server) publicView(d *sign.Document, rc *sign.Recipient) map[string]any {
	var fields []map[string]any
	for _, f := range d.Fields {
		if f.RecipientID == rc.ID {
			fields = append(fields, map[string]any{"id": f.ID, "type": f.Type, "page": f.Page, "x": f.X, "y": f.Y,
				"width": f.Width, "height": f.Height, "required": f.Required, "label": f.Label, "value": f.Value})
		}
	}
	if fields == nil {
		fields = []map[string]any{}
	}
	return map[string]any{"document": map[string]any{"id": d.ID, "name": d.Name, "message": d.Message, "status": d.Status, "pages": d.Pages},
		"recipient": map[string]any{"id": rc.ID, "name": rc.Name, "email": rc.Email, "role": rc.Role, "status": rc.Status},
		"fields":    fields}
}

func (s *Server) handlePublicView(w http.ResponseWriter, r *http.Request) error {
	d, rc, err := s.sign.View(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s.publicView(d, rc))
	return nil
}

func (s *Server) handlePublicSign(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Values map[string]string `json:"values"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, rc, err := s.sign.Sign(r.Context(), r.URL.Query().Get("token"), in.Values)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s.publicView(d, rc))
	return nil
}

func (s *Server) handlePublicDecline(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Reason string `json:"reason"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	d, rc, err := s.sign.Decline(r.Context(), r.URL.Query().Get("token"), in.Reason)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s.publicView(d, rc))
	return nil
}
