package forms

import "github.com/gatehouse/gatehouse/internal/httpjson"

// autoresponderJSON is a form's autoresponder in TOOLS.md.
type autoresponderJSON struct {
	Enabled bool   `json:"enabled"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// formJSON is the Form of TOOLS.md, with its public submit URL.
type formJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Endpoint      string            `json:"endpoint"`
	Autoresponder autoresponderJSON `json:"autoresponder"`
	// RedirectOrigins are where a submission's _next may lead.
	RedirectOrigins []string `json:"redirectOrigins"`
	Created         string   `json:"created"`
}

// toForm is f as the API writes it.
func (h *handlers) toForm(f *Form) formJSON {
	a := f.Autoresponder
	return formJSON{ID: f.ID, Name: f.Name, Endpoint: h.svc.Endpoint(f.ID), Created: httpjson.Stamp(f.Created),
		Autoresponder:   autoresponderJSON{Enabled: a.Enabled, Subject: a.Subject, Body: a.Body},
		RedirectOrigins: append([]string{}, f.RedirectOrigins...)}
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

// toDestination is d as the API writes it.
func toDestination(d *Destination) destinationJSON {
	return destinationJSON{ID: d.ID, Type: d.Type, Config: map[string][]string{"to": d.To}, Unconfirmed: d.Unconfirmed(),
		Created: httpjson.Stamp(d.Created)}
}

// submissionJSON is a Submission of TOOLS.md.
type submissionJSON struct {
	ID      string         `json:"id"`
	Data    map[string]any `json:"data"`
	Spam    bool           `json:"spam"`
	Created string         `json:"created"`
}

// toSubmission is sub as the API writes it.
func toSubmission(sub *Submission) submissionJSON {
	return submissionJSON{ID: sub.ID, Data: sub.Data, Spam: sub.Spam, Created: httpjson.Stamp(sub.Created)}
}

// FormJSON and SubmissionJSON are a Form and a Submission as the API shows
// them, for the MCP server's tools (internal/mcp), which answer in the
// same shape.
type (
	FormJSON       = formJSON
	SubmissionJSON = submissionJSON
)

// FormJSON is f as the API shows it.
func (s *Service) FormJSON(f *Form) FormJSON { return (&handlers{svc: s}).toForm(f) }

// ToSubmissionJSON is sub as the API shows it.
func ToSubmissionJSON(sub *Submission) SubmissionJSON { return toSubmission(sub) }
