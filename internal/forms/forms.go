// Package forms is the Forms tool API of TOOLS.md: a workspace's forms,
// their public submissions (with a honeypot for spam), the email
// destinations each submission is mailed to, and an optional autoresponder.
package forms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/outbound"
)

// Tool is the tool name tokens list to reach this API.
const Tool = "forms"

// Bounds, decided in docs/decisions.md.
const (
	MaxName            = 200
	MaxAutoresponder   = 10_000
	MaxRecipients      = 20
	MaxFields          = 100
	MaxFieldValueBytes = 10_000
	MaxNext            = 2048
	MaxDepth           = 16
)

// Autoresponder is the mail a submitter gets back.
type Autoresponder struct {
	Enabled       bool
	Subject, Body string
}

// Form is a workspace's form.
type Form struct {
	ID, OrgID, Name, CreatedBy string
	Autoresponder              Autoresponder
	Created                    time.Time
	// Enabled: the forms tool is enabled in the form's workspace (read
	// with the form).
	Enabled bool
}

// Submission is one submitted entry.
type Submission struct {
	ID, FormID string
	Data       map[string]any
	Spam       bool
	Created    time.Time
}

// Destination is where submissions go: type "email" with config.to.
type Destination struct {
	ID, FormID, Type string
	To               []string
	Created          time.Time
}

// Store persists Forms; ErrNotFound as in accounts.
type Store interface {
	// FormsTx runs fn in a read-write transaction.
	FormsTx(ctx context.Context, fn func(tx Store) error) error
	// OrgLive reports whether orgID exists and is not deleted.
	OrgLive(ctx context.Context, orgID string) (bool, error)
	// LiveForm reads a form of a live org; orgID "" matches any org.
	LiveForm(ctx context.Context, orgID, id string) (*Form, error)
	CreateForm(ctx context.Context, f *Form) error
	ListForms(ctx context.Context, orgID string) ([]*Form, error)
	AddSubmission(ctx context.Context, s *Submission) error
	// ListSubmissions lists a form's submissions, newest first.
	ListSubmissions(ctx context.Context, formID string) ([]*Submission, error)
	AddDestination(ctx context.Context, d *Destination) error
	ListDestinations(ctx context.Context, formID string) ([]*Destination, error)
	// DeleteDestination removes one; ErrNotFound when it is not the form's.
	DeleteDestination(ctx context.Context, formID, id string) error
	AddAudit(ctx context.Context, e *accounts.AuditEntry) error
}

// Service is the Forms tool.
type Service struct {
	store    Store
	mail     mail.Sender
	log      *slog.Logger
	now      func() time.Time
	endpoint string // public submit base: {forms_url}/f
	sending  sync.WaitGroup
}

// Config wires a Service.
type Config struct {
	Store    Store
	Mail     mail.Sender
	Logger   *slog.Logger
	Now      func() time.Time // nil: time.Now
	FormsURL string           // GATEHOUSE_FORMS_URL
}

// New returns the Forms tool.
func New(c Config) *Service {
	s := &Service{store: c.Store, mail: c.Mail, log: c.Logger, now: c.Now, endpoint: strings.TrimRight(c.FormsURL, "/") + "/f/"}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Endpoint is a form's public submit URL.
func (s *Service) Endpoint(formID string) string { return s.endpoint + formID }

// Wait blocks until every queued mail has been handed to the mailer.
func (s *Service) Wait() { s.sending.Wait() }

var errFormNotFound = accounts.Errorf(accounts.KindNotFound, "form not found")

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// form reads a form of the caller's workspace.
func (s *Service) form(ctx context.Context, p *accounts.Principal, id string) (*Form, error) {
	if !accounts.IsID(id) {
		return nil, errFormNotFound
	}
	f, err := s.store.LiveForm(ctx, p.OrgID, id)
	if errors.Is(err, accounts.ErrNotFound) {
		return nil, errFormNotFound
	}
	if err != nil {
		return nil, accounts.Internal("find form", err)
	}
	return f, nil
}

// CreateInput is the body of a form create.
type CreateInput struct {
	Name          *string `json:"name"`
	Autoresponder *struct {
		Enabled bool   `json:"enabled"`
		Subject string `json:"subject"`
		Body    string `json:"body"`
	} `json:"autoresponder"`
}

// Create adds a form to the caller's workspace.
func (s *Service) Create(ctx context.Context, p *accounts.Principal, in *CreateInput) (*Form, error) {
	if in.Name == nil {
		return nil, accounts.Invalid("name is required")
	}
	name := strings.TrimSpace(*in.Name)
	if name == "" || utf8.RuneCountInString(name) > MaxName {
		return nil, accounts.Invalid("name must have 1 to %d characters", MaxName)
	}
	f := &Form{ID: newID(), OrgID: p.OrgID, Name: name, CreatedBy: p.UserID, Created: s.clock()}
	if a := in.Autoresponder; a != nil {
		f.Autoresponder = Autoresponder{Enabled: a.Enabled, Subject: strings.TrimSpace(a.Subject), Body: a.Body}
		if a.Enabled && (f.Autoresponder.Subject == "" || strings.TrimSpace(a.Body) == "") {
			return nil, accounts.Invalid("an enabled autoresponder needs a subject and a body")
		}
		if len(a.Subject)+len(a.Body) > MaxAutoresponder {
			return nil, accounts.Invalid("the autoresponder is longer than %d bytes", MaxAutoresponder)
		}
	}
	err := s.store.FormsTx(ctx, func(tx Store) error {
		if live, err := tx.OrgLive(ctx, p.OrgID); err != nil {
			return accounts.Internal("find org", err)
		} else if !live {
			return accounts.Errorf(accounts.KindNotFound, "organization not found")
		}
		if err := tx.CreateForm(ctx, f); err != nil {
			return accounts.Internal("create form", err)
		}
		return s.audit(ctx, tx, p, f, "form.created", "form", f.ID, map[string]any{"name": f.Name})
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Get reads a form of the caller's workspace.
func (s *Service) Get(ctx context.Context, p *accounts.Principal, id string) (*Form, error) {
	return s.form(ctx, p, id)
}

// List lists the workspace's forms, oldest first.
func (s *Service) List(ctx context.Context, p *accounts.Principal) ([]*Form, error) {
	fs, err := s.store.ListForms(ctx, p.OrgID)
	if err != nil {
		return nil, accounts.Internal("list forms", err)
	}
	return fs, nil
}

// Submissions lists a form's submissions, newest first.
func (s *Service) Submissions(ctx context.Context, p *accounts.Principal, id string) ([]*Submission, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out, err := s.store.ListSubmissions(ctx, f.ID)
	if err != nil {
		return nil, accounts.Internal("list submissions", err)
	}
	return out, nil
}

// Destinations lists a form's destinations.
func (s *Service) Destinations(ctx context.Context, p *accounts.Principal, id string) ([]*Destination, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out, err := s.store.ListDestinations(ctx, f.ID)
	if err != nil {
		return nil, accounts.Internal("list destinations", err)
	}
	return out, nil
}

// DestinationInput is the body of a destination create.
type DestinationInput struct {
	Type   *string `json:"type"`
	Config *struct {
		To []string `json:"to"`
	} `json:"config"`
}

// AddDestination adds an email destination to a form.
func (s *Service) AddDestination(ctx context.Context, p *accounts.Principal, id string, in *DestinationInput) (*Destination, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if in.Type == nil {
		return nil, accounts.Invalid("type is required")
	}
	if *in.Type != "email" {
		return nil, accounts.Invalid("type must be email")
	}
	if in.Config == nil || len(in.Config.To) == 0 {
		return nil, accounts.Invalid("config.to must list at least one email address")
	}
	if len(in.Config.To) > MaxRecipients {
		return nil, accounts.Invalid("config.to lists more than %d addresses", MaxRecipients)
	}
	d := &Destination{ID: newID(), FormID: f.ID, Type: "email", Created: s.clock()}
	for _, raw := range in.Config.To {
		e, err := accounts.NormalizeEmail(raw)
		if err != nil {
			return nil, accounts.Invalid("config.to: %q is not a valid email address", raw)
		}
		d.To = append(d.To, e)
	}
	err = s.store.FormsTx(ctx, func(tx Store) error {
		if err := tx.AddDestination(ctx, d); err != nil {
			return accounts.Internal("add destination", err)
		}
		return s.audit(ctx, tx, p, f, "destination.created", "destination", d.ID, map[string]any{"type": d.Type, "to": d.To})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// DeleteDestination removes a destination of a form.
func (s *Service) DeleteDestination(ctx context.Context, p *accounts.Principal, id, destID string) error {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return err
	}
	if !accounts.IsID(destID) {
		return accounts.Errorf(accounts.KindNotFound, "destination not found")
	}
	return s.store.FormsTx(ctx, func(tx Store) error {
		err := tx.DeleteDestination(ctx, f.ID, destID)
		if errors.Is(err, accounts.ErrNotFound) {
			return accounts.Errorf(accounts.KindNotFound, "destination not found")
		}
		if err != nil {
			return accounts.Internal("delete destination", err)
		}
		return s.audit(ctx, tx, p, f, "destination.deleted", "destination", destID, map[string]any{})
	})
}

// Submit stores a public submission to form id; data are the submitted
// fields. A non-empty _gotcha marks it spam; _gotcha and _next are not
// stored. It returns where to send the submitter (_next), if anywhere.
func (s *Service) Submit(ctx context.Context, id string, data map[string]any) (string, error) {
	if !accounts.IsID(id) {
		return "", errFormNotFound
	}
	f, err := s.store.LiveForm(ctx, "", id)
	if errors.Is(err, accounts.ErrNotFound) {
		return "", errFormNotFound
	}
	if err != nil {
		return "", accounts.Internal("find form", err)
	}
	if !f.Enabled {
		return "", accounts.Errorf(accounts.KindForbidden, "the %s tool is not enabled for this workspace", Tool)
	}
	if data == nil {
		return "", accounts.Invalid("a submission must be an object of fields")
	}
	spam := filled(data["_gotcha"])
	next := text(data["_next"])
	delete(data, "_gotcha")
	delete(data, "_next")
	if len(data) > MaxFields {
		return "", accounts.Invalid("a submission has at most %d fields", MaxFields)
	}
	if next != "" {
		var ok bool
		if next, ok = outbound.ParseURL(next, MaxNext, "http", "https"); !ok {
			return "", accounts.Invalid("_next must be an absolute http(s) URL of at most %d bytes", MaxNext)
		}
	}
	for k, v := range data {
		if sv, ok := v.(string); ok {
			v = strings.ToValidUTF8(sv, "\uFFFD")
			data[k] = v
		}
		if len(k) > 200 || len(text(v)) > MaxFieldValueBytes {
			return "", accounts.Invalid("field %q is too long", truncate(k, 40))
		}
		if depth(v) > MaxDepth {
			return "", accounts.Invalid("field %q nests deeper than %d levels", truncate(k, 40), MaxDepth)
		}
	}
	sub := &Submission{ID: newID(), FormID: f.ID, Data: data, Spam: spam, Created: s.clock()}
	err = s.store.FormsTx(ctx, func(tx Store) error {
		if err := tx.AddSubmission(ctx, sub); err != nil {
			return accounts.Internal("store submission", err)
		}
		return s.audit(ctx, tx, nil, f, "submission.created", "submission", sub.ID, map[string]any{"spam": spam})
	})
	if err != nil {
		return "", err
	}
	if !spam {
		s.deliver(f, sub)
	}
	return next, nil
}

// deliver mails a submission to the form's email destinations (Reply-To
// the submitter when a field named email holds a valid address) and the
// autoresponder to the submitter, in the background.
func (s *Service) deliver(f *Form, sub *Submission) {
	submitter, _ := accounts.NormalizeEmail(text(sub.Data["email"]))
	var msgs []mail.Message
	dests, err := s.store.ListDestinations(context.Background(), f.ID)
	if err != nil {
		s.log.Error("form destinations not read; submission not mailed", "form_id", f.ID, "submission_id", sub.ID, "err", err)
	}
	body := summary(f, sub)
	for _, d := range dests {
		for _, to := range d.To {
			msgs = append(msgs, mail.Message{To: to, ReplyTo: submitter, Subject: "New submission: " + f.Name, Text: body})
		}
	}
	if f.Autoresponder.Enabled && submitter != "" {
		msgs = append(msgs, mail.Message{To: submitter, Subject: f.Autoresponder.Subject, Text: f.Autoresponder.Body})
	}
	for _, m := range msgs {
		s.sending.Add(1)
		go func() {
			defer s.sending.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.mail.Send(ctx, m); err != nil {
				s.log.Warn("form mail not sent", "form_id", f.ID, "submission_id", sub.ID, "err", err)
			}
		}()
	}
}

// summary is the text of a submission mail: one line per field, sorted.
func summary(f *Form, sub *Submission) string {
	keys := make([]string, 0, len(sub.Data))
	for k := range sub.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "A new submission to %s (%s):\n\n", f.Name, sub.Created.Format(time.RFC3339))
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, text(sub.Data[k]))
	}
	return b.String()
}

// filled reports whether a honeypot value is non-empty: a non-blank
// string, true, a non-zero number, a non-empty array or object.
func filled(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return strings.TrimSpace(v) != ""
	case bool:
		return v
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case []any:
		return len(v) > 0
	case []string:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// depth is how deeply a submitted value nests (a scalar is 0).
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// text renders a submitted value: strings as they are, anything else as JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// audit writes an entry of the forms tool through tx; p nil is the public
// submitter.
func (s *Service) audit(ctx context.Context, tx Store, p *accounts.Principal, f *Form, action, targetType, targetID string, meta map[string]any) error {
	actor := ""
	if p != nil {
		actor = p.UserID
	}
	m, _ := json.Marshal(meta)
	if err := tx.AddAudit(ctx, &accounts.AuditEntry{ID: newID(), OrgID: f.OrgID, Tool: Tool, Action: Tool + "." + action,
		ActorID: actor, TargetType: targetType, TargetID: targetID, Meta: string(m), At: s.clock()}); err != nil {
		return accounts.Internal("audit", err)
	}
	return nil
}
