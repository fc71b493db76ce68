// Package forms is the Forms tool API of TOOLS.md: a workspace's forms,
// their public submissions (with a honeypot for spam), the email
// destinations each submission is mailed to, and an optional autoresponder.
package forms

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/maillimit"
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
	// RedirectOrigins are the https origins a submission's _next may
	// lead to (redirects.go).
	RedirectOrigins []string
	Created         time.Time
	// ToolSwitch is the workspace's stored switch of the forms tool, read
	// with the form; nil when never set (gatehouse.ToolOn decides).
	ToolSwitch *bool
}

// Submission is one submitted entry.
type Submission struct {
	ID, FormID string
	Data       map[string]any
	Spam       bool
	Created    time.Time
	// AutorespondedAt is when the autoresponder was sent for it (nil: not).
	AutorespondedAt *time.Time
}

// Store persists Forms; ErrNotFound as in workspace.
type Store interface {
	// Tx runs fn in a read-write transaction.
	Tx(ctx context.Context, fn func(tx Store) error) error
	// OrgLive reports whether orgID exists and is not deleted.
	OrgLive(ctx context.Context, orgID string) (bool, error)
	// LiveForm reads a form of a live org; orgID "" matches any org.
	LiveForm(ctx context.Context, orgID, id string) (*Form, error)
	CreateForm(ctx context.Context, f *Form) error
	// UpdateForm writes a form's redirect origins.
	UpdateForm(ctx context.Context, f *Form) error
	ListForms(ctx context.Context, orgID string) ([]*Form, error)
	AddSubmission(ctx context.Context, s *Submission) error
	// LockOrg holds the workspace's row until the transaction ends, so
	// concurrent destination creates and submissions count each other's
	// mails.
	LockOrg(ctx context.Context, orgID string) error
	// The record of sent mail the caps count (maillimit.FormConfirmation
	// and FormAutoresponse rows, per workspace): apart from the forms and
	// destinations, so deleting or making them resets nothing.
	maillimit.Ledger
	// ListSubmissions lists a form's submissions, newest first.
	ListSubmissions(ctx context.Context, formID string) ([]*Submission, error)
	AddDestination(ctx context.Context, d *Destination) error
	// ListDestinations lists a form's destinations with their confirmed
	// addresses, oldest first.
	ListDestinations(ctx context.Context, formID string) ([]*Destination, error)
	// VerifiedMemberEmails returns those of emails that are the verified
	// address of a member of orgID.
	VerifiedMemberEmails(ctx context.Context, orgID string, emails []string) ([]string, error)
	AddRecipient(ctx context.Context, r *Recipient) error
	// ConfirmRecipient confirms the unconfirmed, unexpired recipient whose
	// token hashes to tokenHash, consuming the token; ErrNotFound when there
	// is none.
	ConfirmRecipient(ctx context.Context, tokenHash string, at time.Time) (*Recipient, error)
	// DeleteDestination removes one; ErrNotFound when it is not the form's.
	DeleteDestination(ctx context.Context, formID, id string) error
	AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error
	// QueueMail queues m in the transaction: it is sent once that
	// commits, never if it rolls back.
	QueueMail(ctx context.Context, m mail.Message) error
	// MailLanguage is the language preference of the account with the
	// address key emailKey, else of the account senderID, else "".
	MailLanguage(ctx context.Context, emailKey, senderID string) (string, error)
}

// Service is the Forms tool.
type Service struct {
	store    Store
	log      *slog.Logger
	clock    gatehouse.Clock
	endpoint string // public submit base: {forms_url}/f
	confirm  string // confirmation page: {forms_url}/confirm
	brand    mail.Brand
	// noMailLimits lifts the autoresponse and confirmation-mail caps.
	noMailLimits bool
}

// Config wires a Service.
type Config struct {
	Store    Store
	Logger   *slog.Logger
	Now      func() time.Time // nil: time.Now
	FormsURL string           // GATEHOUSE_FORMS_URL
	// Brand names the product in the mail the tool writes (not in an
	// autoresponder: those are the customer's words).
	Brand mail.Brand
	// NoMailLimits turns the hourly autoresponse cap and the daily cap on
	// confirmation mails off (GATEHOUSE_MAIL_LIMIT=off; the zero value
	// keeps them on). Spam never gets an autoresponse and unconfirmed
	// destinations never get submissions either way.
	NoMailLimits bool
}

// ConfirmPath is the path, under the forms URL, of the page where a
// destination's recipient confirms it.
const ConfirmPath = "/confirm"

// New returns the Forms tool.
func New(c Config) *Service {
	s := &Service{store: c.Store, log: c.Logger, clock: gatehouse.NewClock(c.Now), endpoint: strings.TrimRight(c.FormsURL, "/") + "/f/",
		confirm: strings.TrimRight(c.FormsURL, "/") + ConfirmPath, noMailLimits: c.NoMailLimits, brand: c.Brand}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Endpoint is a form's public submit URL.
func (s *Service) Endpoint(formID string) string { return s.endpoint + formID }

var errFormNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "form not found")

// form reads a form of the caller's workspace.
func (s *Service) form(ctx context.Context, p *gatehouse.Principal, id string) (*Form, error) {
	if !gatehouse.IsID(id) {
		return nil, errFormNotFound
	}
	f, err := s.store.LiveForm(ctx, p.OrgID, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errFormNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find form", err)
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
	RedirectOrigins *[]string `json:"redirectOrigins"`
}

// Create adds a form to the caller's workspace.
func (s *Service) Create(ctx context.Context, p *gatehouse.Principal, in *CreateInput) (*Form, error) {
	if in.Name == nil {
		return nil, gatehouse.Invalid("name is required")
	}
	name := strings.TrimSpace(*in.Name)
	if err := gatehouse.CheckOneLine("name", name); err != nil {
		return nil, err
	}
	if name == "" || utf8.RuneCountInString(name) > MaxName {
		return nil, gatehouse.Invalid("name must have 1 to %d characters", MaxName)
	}
	f := &Form{ID: gatehouse.NewID(), OrgID: p.OrgID, Name: name, CreatedBy: p.UserID, Created: s.clock.Now()}
	if a := in.Autoresponder; a != nil {
		f.Autoresponder = Autoresponder{Enabled: a.Enabled, Subject: strings.TrimSpace(a.Subject), Body: a.Body}
		if err := gatehouse.CheckOneLine("autoresponder.subject", f.Autoresponder.Subject); err != nil {
			return nil, err
		}
		if a.Enabled && (f.Autoresponder.Subject == "" || strings.TrimSpace(a.Body) == "") {
			return nil, gatehouse.Invalid("an enabled autoresponder needs a subject and a body")
		}
		if len(a.Subject)+len(a.Body) > MaxAutoresponder {
			return nil, gatehouse.Invalid("the autoresponder is longer than %d bytes", MaxAutoresponder)
		}
	}
	if in.RedirectOrigins != nil {
		var err error
		if f.RedirectOrigins, err = redirectOrigins(*in.RedirectOrigins); err != nil {
			return nil, err
		}
	}
	err := s.store.Tx(ctx, func(tx Store) error {
		if live, err := tx.OrgLive(ctx, p.OrgID); err != nil {
			return gatehouse.Internal("find org", err)
		} else if !live {
			return gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")
		}
		if err := tx.CreateForm(ctx, f); err != nil {
			return gatehouse.Internal("create form", err)
		}
		return s.audit(ctx, tx, p, f, "form.created", "form", f.ID, map[string]any{"name": f.Name})
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Get reads a form of the caller's workspace.
func (s *Service) Get(ctx context.Context, p *gatehouse.Principal, id string) (*Form, error) {
	return s.form(ctx, p, id)
}

// List lists the workspace's forms, oldest first.
func (s *Service) List(ctx context.Context, p *gatehouse.Principal) ([]*Form, error) {
	fs, err := s.store.ListForms(ctx, p.OrgID)
	if err != nil {
		return nil, gatehouse.Internal("list forms", err)
	}
	return fs, nil
}

// Submissions lists a form's submissions, newest first.
func (s *Service) Submissions(ctx context.Context, p *gatehouse.Principal, id string) ([]*Submission, error) {
	f, err := s.form(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out, err := s.store.ListSubmissions(ctx, f.ID)
	if err != nil {
		return nil, gatehouse.Internal("list submissions", err)
	}
	return out, nil
}

// audit writes an entry of the forms tool through tx; p nil is the public
// submitter.
func (s *Service) audit(ctx context.Context, tx Store, p *gatehouse.Principal, f *Form, action, targetType, targetID string, meta map[string]any) error {
	actor := ""
	if p != nil {
		actor = p.UserID
	}
	m, _ := json.Marshal(meta)
	if err := tx.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: f.OrgID, Tool: Tool, Action: Tool + "." + action,
		ActorID: actor, TargetType: targetType, TargetID: targetID, Meta: string(m), At: s.clock.Now()}); err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}
