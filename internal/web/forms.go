package web

import (
	"errors"
	"mime"
	"net/http"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/forms"
	"github.com/gatehouse/gatehouse/internal/ratelimit"
)

// formRoutes serves the Forms tool API of TOOLS.md under /forms/, the path
// of the default GATEHOUSE_FORMS_URL ({api_url}/forms).
func (s *Server) formRoutes(m *http.ServeMux) {
	t := func(h authedFunc) http.Handler { return s.tool(forms.Tool, h) }
	m.Handle("POST /forms/v1/forms", t(s.handleCreateForm))
	m.Handle("GET /forms/v1/forms", t(s.handleForms))
	m.Handle("GET /forms/v1/forms/{id}", t(s.handleForm))
	m.Handle("GET /forms/v1/forms/{id}/submissions", t(s.handleSubmissions))
	m.Handle("GET /forms/v1/forms/{id}/destinations", t(s.handleDestinations))
	m.Handle("POST /forms/v1/forms/{id}/destinations", t(s.handleAddDestination))
	m.Handle("DELETE /forms/v1/forms/{id}/destinations/{did}", t(s.handleDeleteDestination))
	m.Handle("POST /forms/f/{id}", s.perIP(func(l *limits) *ratelimit.Limiter { return l.formSubmit }, s.handleSubmit))
	m.HandleFunc("OPTIONS /forms/f/{id}", handleSubmitPreflight)
}

type autoresponderJSON struct {
	Enabled bool   `json:"enabled"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

type formJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Endpoint      string            `json:"endpoint"`
	Autoresponder autoresponderJSON `json:"autoresponder"`
	Created       string            `json:"created"`
}

func (s *Server) toForm(f *forms.Form) formJSON {
	a := f.Autoresponder
	return formJSON{ID: f.ID, Name: f.Name, Endpoint: s.forms.Endpoint(f.ID), Created: stamp(f.Created),
		Autoresponder: autoresponderJSON{Enabled: a.Enabled, Subject: a.Subject, Body: a.Body}}
}

type destinationJSON struct {
	ID      string              `json:"id"`
	Type    string              `json:"type"`
	Config  map[string][]string `json:"config"`
	Created string              `json:"created"`
}

func toDestination(d *forms.Destination) destinationJSON {
	return destinationJSON{ID: d.ID, Type: d.Type, Config: map[string][]string{"to": d.To}, Created: stamp(d.Created)}
}

func (s *Server) handleCreateForm(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	var in forms.CreateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := s.forms.Create(r.Context(), p, &in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"form": s.toForm(f)})
	return nil
}

func (s *Server) handleForms(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	fs, err := s.forms.List(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]formJSON, len(fs))
	for k, f := range fs {
		out[k] = s.toForm(f)
	}
	writeJSON(w, http.StatusOK, map[string]any{"forms": out})
	return nil
}

func (s *Server) handleForm(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	f, err := s.forms.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"form": s.toForm(f)})
	return nil
}

type submissionJSON struct {
	ID      string         `json:"id"`
	Data    map[string]any `json:"data"`
	Spam    bool           `json:"spam"`
	Created string         `json:"created"`
}

func (s *Server) handleSubmissions(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	subs, err := s.forms.Submissions(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]submissionJSON, len(subs))
	for k, sub := range subs {
		out[k] = submissionJSON{ID: sub.ID, Data: sub.Data, Spam: sub.Spam, Created: stamp(sub.Created)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"submissions": out})
	return nil
}

func (s *Server) handleDestinations(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	ds, err := s.forms.Destinations(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]destinationJSON, len(ds))
	for k, d := range ds {
		out[k] = toDestination(d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"destinations": out})
	return nil
}

func (s *Server) handleAddDestination(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	var in forms.DestinationInput
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.forms.AddDestination(r.Context(), p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"destination": toDestination(d)})
	return nil
}

func (s *Server) handleDeleteDestination(w http.ResponseWriter, r *http.Request, p *accounts.Principal) error {
	if err := s.forms.DeleteDestination(r.Context(), p, r.PathValue("id"), r.PathValue("did")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"destination deleted"})
	return nil
}

// handleSubmit takes a public submission, form-encoded (urlencoded or
// multipart, files ignored) or JSON, from any site: no bearer, and CORS
// open so a page's own script can post too.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	data := map[string]any{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		if err := decode(r, &data); err != nil {
			return err
		}
	} else {
		err := r.ParseMultipartForm(1 << 20)
		if err != nil && !errors.Is(err, http.ErrNotMultipart) {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return err
			}
			return accounts.Invalid("the form data could not be read")
		}
		for k, vs := range r.PostForm {
			if len(vs) == 1 {
				data[k] = vs[0]
			} else {
				data[k] = vs
			}
		}
	}
	next, err := s.forms.Submit(r.Context(), r.PathValue("id"), data)
	if err != nil {
		return err
	}
	if next != "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func handleSubmitPreflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
