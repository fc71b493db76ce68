package web

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/forms"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// formRoutes serves the Forms tool API of TOOLS.md under /forms/, the path
// of the default GATEHOUSE_FORMS_URL ({api_url}/forms).
func (s *Server) formRoutes(m *http.ServeMux) {
	t := func(h AuthedFunc) http.Handler { return s.Tool(forms.Tool, h) }
	m.Handle("POST /forms/v1/forms", t(s.handleCreateForm))
	m.Handle("GET /forms/v1/forms", t(s.handleForms))
	m.Handle("GET /forms/v1/forms/{id}", t(s.handleForm))
	m.Handle("GET /forms/v1/forms/{id}/submissions", t(s.handleSubmissions))
	m.Handle("GET /forms/v1/forms/{id}/destinations", t(s.handleDestinations))
	m.Handle("POST /forms/v1/forms/{id}/destinations", t(s.handleAddDestination))
	m.Handle("DELETE /forms/v1/forms/{id}/destinations/{did}", t(s.handleDeleteDestination))
	m.Handle("POST /forms/f/{id}", corsOpen(s.PerIP(s.Limiter("formSubmit", 30, 2*time.Second), s.handleSubmit)))
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

// destinationJSON adds unconfirmed (the addresses of config.to that get no
// submissions until their recipient confirms) to TOOLS.md's fields.
type destinationJSON struct {
	ID          string              `json:"id"`
	Type        string              `json:"type"`
	Config      map[string][]string `json:"config"`
	Unconfirmed []string            `json:"unconfirmed"`
	Created     string              `json:"created"`
}

func toDestination(d *forms.Destination) destinationJSON {
	return destinationJSON{ID: d.ID, Type: d.Type, Config: map[string][]string{"to": d.To}, Unconfirmed: d.Unconfirmed(),
		Created: stamp(d.Created)}
}

func (s *Server) handleCreateForm(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in forms.CreateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := s.forms.Create(r.Context(), p, &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"form": s.toForm(f)})
	return nil
}

func (s *Server) handleForms(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	fs, err := s.forms.List(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]formJSON, len(fs))
	for k, f := range fs {
		out[k] = s.toForm(f)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"forms": out})
	return nil
}

func (s *Server) handleForm(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	f, err := s.forms.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"form": s.toForm(f)})
	return nil
}

type submissionJSON struct {
	ID      string         `json:"id"`
	Data    map[string]any `json:"data"`
	Spam    bool           `json:"spam"`
	Created string         `json:"created"`
}

func (s *Server) handleSubmissions(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	subs, err := s.forms.Submissions(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]submissionJSON, len(subs))
	for k, sub := range subs {
		out[k] = submissionJSON{ID: sub.ID, Data: sub.Data, Spam: sub.Spam, Created: stamp(sub.Created)}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"submissions": out})
	return nil
}

func (s *Server) handleDestinations(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ds, err := s.forms.Destinations(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]destinationJSON, len(ds))
	for k, d := range ds {
		out[k] = toDestination(d)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"destinations": out})
	return nil
}

func (s *Server) handleAddDestination(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in forms.DestinationInput
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.forms.AddDestination(r.Context(), p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"destination": toDestination(d)})
	return nil
}

func (s *Server) handleDeleteDestination(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.forms.DeleteDestination(r.Context(), p, r.PathValue("id"), r.PathValue("did")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"destination deleted"})
	return nil
}

// corsOpen lets any origin read the answer, errors (429 included) too.
func corsOpen(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		h.ServeHTTP(w, r)
	})
}

// handleSubmit takes a public submission from any site, with no bearer:
// urlencoded or multipart (files ignored) as HTML forms send, text/plain
// (an HTML form's enctype="text/plain": one name=value per line), or a
// JSON object.
func (s *Server) handleSubmit(w http.ResponseWriter, r *http.Request) error {
	data, err := submission(r)
	if err != nil {
		return err
	}
	next, err := s.forms.Submit(r.Context(), r.PathValue("id"), data)
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

// submission reads the fields of a public submission.
func submission(r *http.Request) (map[string]any, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case ct == "application/json" || ct == "text/json" || strings.HasSuffix(ct, "+json"):
		body, err := readJSONBody(r)
		if err != nil {
			return nil, err
		}
		var data map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber() // numbers are kept as sent
		if err := dec.Decode(&data); err != nil || data == nil || dec.More() {
			return nil, gatehouse.Invalid("request body must be a JSON object")
		}
		return data, nil
	case ct == "multipart/form-data":
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			if httpjson.TooBig(err) {
				return nil, err
			}
			return nil, gatehouse.Invalid("the form data could not be read")
		}
		return formFields(r.MultipartForm.Value), nil
	case ct == "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			if httpjson.TooBig(err) {
				return nil, err
			}
			return nil, gatehouse.Invalid("the form data could not be read")
		}
		return formFields(r.PostForm), nil
	case ct == "text/plain":
		body, err := readBody(r)
		if err != nil {
			return nil, err
		}
		fields := map[string][]string{}
		for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k != "" {
				fields[k] = append(fields[k], v)
			}
		}
		return formFields(fields), nil
	}
	return nil, gatehouse.Invalid("Content-Type must be application/x-www-form-urlencoded, multipart/form-data, text/plain or application/json")
}

// formFields turns form values into submission fields: one value as a
// string, several as a list; NUL characters are dropped.
func formFields(values map[string][]string) map[string]any {
	data := make(map[string]any, len(values))
	for k, vs := range values {
		k = strings.ReplaceAll(k, "\x00", "")
		for i := range vs {
			vs[i] = strings.ReplaceAll(vs[i], "\x00", "")
		}
		if len(vs) == 1 {
			data[k] = vs[0]
		} else {
			data[k] = vs
		}
	}
	return data
}

func handleSubmitPreflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
