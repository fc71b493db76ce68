// Package sign is the Sign tool API of TOOLS.md: documents (a PDF, its
// recipients and field placements) sent for signature, signed or declined
// by recipients through their tokenised links, voided, duplicated (spec 4.6
// rule 1), with the owner's signing-link copy audited (rule 3) and the
// document events of spec section 6.
package sign

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// Tool is the tool name tokens list to reach this API.
const Tool = "sign"

// Statuses, roles and field types of TOOLS.md.
const (
	Draft, Pending, Completed, Declined, Voided = "draft", "pending", "completed", "declined", "voided"
	Expired                                     = "expired"
	ToSign, Viewed, Signed, Refused             = "pending", "viewed", "signed", "declined" // recipient statuses
	Signer, CC                                  = "signer", "cc"
)

var fieldTypes = []string{"signature", "initials", "date", "text", "checkbox"}

// Bounds, decided in docs/decisions.md.
const (
	MaxFile       = 20 << 20
	MaxName       = 200
	MaxMessage    = 10_000
	MaxRecipients = 50
	MaxFields     = 500
	MaxValue      = 10_000
)

// Document is a document with its recipients and fields.
type Document struct {
	ID, OrgID, OwnerID, Name, Message, Status, VoidReason string
	File                                                  []byte // only when read with the file
	Size                                                  int64
	Pages                                                 int
	Created, Modified                                     time.Time
	SentAt, CompletedAt, VoidedAt, DeclinedAt             *time.Time
	ExpiresAt, ExpiredAt                                  *time.Time // lifecycle.go
	AutoRemindDays                                        int        // remind.go
	LastRemindedAt                                        *time.Time
	LegalHold                                             bool       // purge.go
	PurgedAt                                              *time.Time // purge.go
	Recipients                                            []*Recipient
	Fields                                                []*Field
}

// Recipient is one person a document goes to.
type Recipient struct {
	ID, DocumentID, Name, Email, Role, Status, Token, DeclineReason string
	OrderIndex                                                      int
	ViewedAt, SignedAt, DeclinedAt                                  *time.Time
}

// Field is a placement on a page, for one recipient (or none).
type Field struct {
	ID, DocumentID, RecipientID, Type, Label string
	Page, Position                           int
	X, Y, Width, Height                      float64
	Required                                 bool
	Value                                    *string
}

// Store persists Sign; ErrNotFound as in workspace.
type Store interface {
	Tx(ctx context.Context, fn func(tx Store) error) error
	OrgLive(ctx context.Context, orgID string) (bool, error)
	CreateDocument(ctx context.Context, d *Document) error // with recipients and fields
	// Document reads a document of orgID (withFile: its PDF too) with its
	// recipients and fields; forUpdate locks it until the transaction ends.
	Document(ctx context.Context, orgID, id string, withFile, forUpdate bool) (*Document, error)
	ListDocuments(ctx context.Context, orgID string) ([]*Document, error)
	// RecipientByToken reads the document (locked) and recipient of a
	// signing token.
	RecipientByToken(ctx context.Context, token string) (*Document, *Recipient, error)
	UpdateDocument(ctx context.Context, d *Document) error   // status and times
	UpdateRecipient(ctx context.Context, r *Recipient) error // status and times
	SetFieldValue(ctx context.Context, fieldID string, value *string) error
	DeleteField(ctx context.Context, documentID, fieldID string) error
	// ExpiringDocuments lists the ids and orgs of pending documents whose
	// expiry is at or before now (at most limit).
	ExpiringDocuments(ctx context.Context, now time.Time, limit int) ([][2]string, error)
	// ExpireDocument marks a document expired at now if it is still
	// pending; false when another run (or a signature) got there first.
	ExpireDocument(ctx context.Context, id string, now time.Time) (bool, error)
	// PurgeableDocuments lists the ids and orgs of documents that ended at
	// or before endedBefore, are not held and not yet purged (at most
	// limit).
	PurgeableDocuments(ctx context.Context, endedBefore time.Time, limit int) ([][2]string, error)
	// PurgeDocument removes a document's file and signing data (field
	// values, decline reasons, signing tokens) and marks it purged at now
	// if it is still due as PurgeableDocuments lists; false otherwise.
	PurgeDocument(ctx context.Context, id string, endedBefore, now time.Time) (bool, error)
	SetLegalHold(ctx context.Context, id string, hold bool) error
	AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error
	reminderStore // remind.go
	// Webhooks is the webhooks' store on the same transaction, through
	// which events are queued.
	Webhooks() webhooks.Store
}

// Events queues the tool's webhook events in the transaction of the
// change they announce (tx is that transaction's webhooks store).
type Events interface {
	Emit(ctx context.Context, tx webhooks.Store, orgID, event string, data any) error
}

// Service is the Sign tool.
type Service struct {
	store  Store
	clock  gatehouse.Clock
	base   string // {api_url}/sign: where signing links point
	events Events
	// retention is how long an ended document is kept (purge.go).
	retention atomic.Int64
	// noMailLimits lifts the limits on signing requests and reminders
	// (remind.go); their rounds stay capped.
	noMailLimits bool
}

// New returns the Sign tool; apiURL is GATEHOUSE_API_URL, now nil means
// time.Now, events nil sends none.
func New(store Store, apiURL string, now func() time.Time, events Events) *Service {
	return &Service{store: store, clock: gatehouse.NewClock(now), base: strings.TrimRight(apiURL, "/") + "/sign", events: events}
}

// SetMailLimits turns the limits on signing requests and reminders on (the
// default) or off (GATEHOUSE_MAIL_LIMIT=off); call it before serving.
func (s *Service) SetMailLimits(on bool) { s.noMailLimits = !on }

var errDocumentNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "document not found")

func newToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// FileURL is where a document's PDF is read.
func (s *Service) FileURL(id string) string { return s.base + "/v1/documents/" + id + "/file" }

// SigningURL is a recipient's tokenised link.
func (s *Service) SigningURL(r *Recipient) string { return s.base + "/v1/public/sign?token=" + r.Token }

// RecipientInput and FieldInput are the parts of the create body.
type RecipientInput struct {
	Name       string `json:"name"`
	Email      string `json:"email"`
	Role       string `json:"role"`
	OrderIndex *int   `json:"orderIndex"`
}

// FieldInput places a field for the recipient at RecipientIndex.
type FieldInput struct {
	Type           string  `json:"type"`
	Page           int     `json:"page"`
	X              float64 `json:"x"`
	Y              float64 `json:"y"`
	Width          float64 `json:"width"`
	Height         float64 `json:"height"`
	Required       *bool   `json:"required"`
	Label          string  `json:"label"`
	RecipientIndex *int    `json:"recipientIndex"`
}

// CreateInput is the "document" part of the create body.
type CreateInput struct {
	Name       string           `json:"name"`
	Message    string           `json:"message"`
	Recipients []RecipientInput `json:"recipients"`
	Fields     []FieldInput     `json:"fields"`
	// ExpiresAt: after it a pending document becomes expired (optional).
	ExpiresAt *time.Time `json:"expiresAt"`
	// AutoRemindDays: mail unsigned signers every that many days while
	// pending (optional; 0, the default, never).
	AutoRemindDays *int `json:"autoRemindDays"`
}

// countPages counts the page objects of a PDF (/Type /Page, not /Pages);
// at least 1.
func countPages(pdf []byte) int {
	n := 0
	for _, marker := range [][]byte{[]byte("/Type /Page"), []byte("/Type/Page")} {
		for i := 0; ; {
			j := bytes.Index(pdf[i:], marker)
			if j < 0 {
				break
			}
			i += j + len(marker)
			if i >= len(pdf) || pdf[i] != 's' {
				n++
			}
		}
	}
	return max(n, 1)
}

// Create stores a draft from a PDF and its document description.
func (s *Service) Create(ctx context.Context, p *gatehouse.Principal, pdf []byte, in *CreateInput) (*Document, error) {
	if len(pdf) == 0 {
		return nil, gatehouse.Invalid("file is required (a PDF)")
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return nil, gatehouse.Invalid("file must be a PDF")
	}
	if len(pdf) > MaxFile {
		return nil, gatehouse.Invalid("file is larger than %d bytes", MaxFile)
	}
	now := s.clock.Now()
	d := &Document{ID: gatehouse.NewID(), OrgID: p.OrgID, OwnerID: p.UserID, Status: Draft, File: pdf, Size: int64(len(pdf)),
		Pages: countPages(pdf), Created: now, Modified: now}
	d.Name = strings.TrimSpace(in.Name)
	if d.Name == "" || utf8.RuneCountInString(d.Name) > MaxName {
		return nil, gatehouse.Invalid("document.name must have 1 to %d characters", MaxName)
	}
	if len(in.Message) > MaxMessage {
		return nil, gatehouse.Invalid("document.message is longer than %d bytes", MaxMessage)
	}
	d.Message = in.Message
	expires, err := expiry(in.ExpiresAt, now)
	if err != nil {
		return nil, err
	}
	d.ExpiresAt = expires
	if d.AutoRemindDays, err = remindDays(in.AutoRemindDays); err != nil {
		return nil, err
	}
	if len(in.Recipients) > MaxRecipients || len(in.Fields) > MaxFields {
		return nil, gatehouse.Invalid("at most %d recipients and %d fields", MaxRecipients, MaxFields)
	}
	for k, ri := range in.Recipients {
		r, err := recipientOf(d.ID, k, ri)
		if err != nil {
			return nil, err
		}
		d.Recipients = append(d.Recipients, r)
	}
	for k, fi := range in.Fields {
		f, err := s.field(d, k, fi)
		if err != nil {
			return nil, err
		}
		d.Fields = append(d.Fields, f)
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if live, err := tx.OrgLive(ctx, p.OrgID); err != nil {
			return gatehouse.Internal("find org", err)
		} else if !live {
			return gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")
		}
		if err := tx.CreateDocument(ctx, d); err != nil {
			return gatehouse.Internal("create document", err)
		}
		return s.audit(ctx, tx, p.UserID, d, "document.created", map[string]any{"name": d.Name})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (s *Service) field(d *Document, k int, fi FieldInput) (*Field, error) {
	bad := func(what string) error { return gatehouse.Invalid("fields[%d]: %s", k, what) }
	if !slices.Contains(fieldTypes, fi.Type) {
		return nil, bad("type must be one of " + strings.Join(fieldTypes, ", "))
	}
	if fi.Page < 1 || fi.Page > d.Pages {
		return nil, bad("page must be within the document's pages")
	}
	if fi.X < 0 || fi.Y < 0 || fi.Width <= 0 || fi.Height <= 0 {
		return nil, bad("x and y must be at least 0, width and height above 0")
	}
	if utf8.RuneCountInString(fi.Label) > MaxName {
		return nil, bad("label is too long")
	}
	f := &Field{ID: gatehouse.NewID(), DocumentID: d.ID, Type: fi.Type, Page: fi.Page, X: fi.X, Y: fi.Y, Width: fi.Width, Height: fi.Height,
		Required: fi.Required == nil || *fi.Required, Label: fi.Label, Position: k}
	if fi.RecipientIndex != nil {
		i := *fi.RecipientIndex
		if i < 0 || i >= len(d.Recipients) || d.Recipients[i].Role != Signer {
			return nil, bad("recipientIndex must name a signer of the document")
		}
		f.RecipientID = d.Recipients[i].ID
	}
	return f, nil
}

func (s *Service) document(ctx context.Context, st Store, p *gatehouse.Principal, id string, withFile, lock bool) (*Document, error) {
	if id == "" || !utf8.ValidString(id) || len(id) > 64 {
		return nil, errDocumentNotFound
	}
	d, err := st.Document(ctx, p.OrgID, id, withFile, lock)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errDocumentNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find document", err)
	}
	return d, nil
}

// recipientOf checks the k-th recipient of a new document docID.
func recipientOf(docID string, k int, ri RecipientInput) (*Recipient, error) {
	email, err := gatehouse.NormalizeEmail(ri.Email)
	if err != nil {
		return nil, gatehouse.Invalid("recipients[%d].email is not a valid address", k)
	}
	name := strings.TrimSpace(ri.Name)
	if name == "" || utf8.RuneCountInString(name) > MaxName {
		return nil, gatehouse.Invalid("recipients[%d].name must have 1 to %d characters", k, MaxName)
	}
	role := ri.Role
	if role == "" {
		role = Signer
	}
	if role != Signer && role != CC {
		return nil, gatehouse.Invalid("recipients[%d].role must be signer or cc", k)
	}
	order := k
	if ri.OrderIndex != nil {
		order = *ri.OrderIndex
		if order < 0 || order > MaxRecipients*100 {
			return nil, gatehouse.Invalid("recipients[%d].orderIndex must be from 0 to %d", k, MaxRecipients*100)
		}
	}
	return &Recipient{ID: gatehouse.NewID(), DocumentID: docID, Name: name, Email: email, Role: role,
		OrderIndex: order, Status: ToSign, Token: newToken()}, nil
}

// Get reads a document of the caller's workspace.
func (s *Service) Get(ctx context.Context, p *gatehouse.Principal, id string) (*Document, error) {
	return s.document(ctx, s.store, p, id, false, false)
}

// File reads a document's PDF; 410 once purged.
func (s *Service) File(ctx context.Context, p *gatehouse.Principal, id string) (*Document, error) {
	d, err := s.document(ctx, s.store, p, id, true, false)
	if err != nil {
		return nil, err
	}
	if err := purged(d); err != nil {
		return nil, err
	}
	return d, nil
}

// List lists the workspace's documents, newest first.
func (s *Service) List(ctx context.Context, p *gatehouse.Principal) ([]*Document, error) {
	ds, err := s.store.ListDocuments(ctx, p.OrgID)
	if err != nil {
		return nil, gatehouse.Internal("list documents", err)
	}
	return ds, nil
}

// change runs fn on a locked document of the caller's workspace and
// writes the result; its events are queued in the same transaction.
func (s *Service) change(ctx context.Context, p *gatehouse.Principal, id string, fn func(tx Store, d *Document) ([]event, error)) (*Document, error) {
	var out *Document
	err := s.store.Tx(ctx, func(tx Store) error {
		d, err := s.document(ctx, tx, p, id, false, true)
		if err != nil {
			return err
		}
		evs, err := fn(tx, d)
		if err != nil {
			return err
		}
		d.Modified = s.clock.Now()
		if err := tx.UpdateDocument(ctx, d); err != nil {
			return gatehouse.Internal("update document", err)
		}
		out = d
		return s.send(ctx, tx, d, evs)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type event struct {
	name      string
	recipient *Recipient
}

// Send puts a draft out for signature.
func (s *Service) Send(ctx context.Context, p *gatehouse.Principal, id string) (*Document, error) {
	return s.change(ctx, p, id, func(tx Store, d *Document) ([]event, error) {
		if d.Status != Draft {
			return nil, gatehouse.Invalid("only a draft can be sent (this document is %s)", d.Status)
		}
		signers := 0
		for _, r := range d.Recipients {
			if r.Role == Signer {
				signers++
			}
		}
		if signers == 0 {
			return nil, gatehouse.Invalid("a document needs at least one signer to be sent")
		}
		now := s.clock.Now()
		d.Status, d.SentAt = Pending, &now
		if err := s.requestSignatures(ctx, tx, d, p.UserID); err != nil {
			return nil, err
		}
		return []event{{name: "document.sent"}}, s.audit(ctx, tx, p.UserID, d, "document.sent", map[string]any{"recipients": len(d.Recipients)})
	})
}

// Void cancels a draft or pending document.
func (s *Service) Void(ctx context.Context, p *gatehouse.Principal, id, reason string) (*Document, error) {
	if len(reason) > MaxMessage {
		return nil, gatehouse.Invalid("reason is longer than %d bytes", MaxMessage)
	}
	return s.change(ctx, p, id, func(tx Store, d *Document) ([]event, error) {
		if d.Status != Draft && d.Status != Pending {
			return nil, gatehouse.Errorf(gatehouse.KindConflict, "a %s document cannot be voided", d.Status)
		}
		now := s.clock.Now()
		d.Status, d.VoidedAt, d.VoidReason = Voided, &now, strings.TrimSpace(reason)
		return []event{{name: "document.voided"}}, s.audit(ctx, tx, p.UserID, d, "document.voided", map[string]any{"reason": d.VoidReason})
	})
}

// DeleteField removes one field from a pending document while its
// recipient (if any) has not signed (spec 4.6 rule 2).
func (s *Service) DeleteField(ctx context.Context, p *gatehouse.Principal, id, fieldID string) (*Document, error) {
	return s.change(ctx, p, id, func(tx Store, d *Document) ([]event, error) {
		var f *Field
		for _, x := range d.Fields {
			if x.ID == fieldID {
				f = x
			}
		}
		if f == nil {
			return nil, gatehouse.Errorf(gatehouse.KindNotFound, "field not found")
		}
		if d.Status != Pending {
			return nil, gatehouse.Invalid("fields can be removed only from a pending document (this one is %s)", d.Status)
		}
		for _, r := range d.Recipients {
			if r.ID == f.RecipientID && r.Status == Signed {
				return nil, gatehouse.Errorf(gatehouse.KindConflict, "the field's recipient has already signed")
			}
		}
		if err := tx.DeleteField(ctx, d.ID, f.ID); err != nil {
			return nil, gatehouse.Internal("delete field", err)
		}
		d.Fields = slices.DeleteFunc(d.Fields, func(x *Field) bool { return x == f })
		return nil, s.audit(ctx, tx, p.UserID, d, "document.field_removed", map[string]any{"field_id": f.ID})
	})
}

// SigningLink returns a recipient's tokenised link to the document's owner
// and writes the copy to the audit trail (spec 4.6 rule 3).
func (s *Service) SigningLink(ctx context.Context, p *gatehouse.Principal, id, recipientID string) (string, error) {
	var link string
	err := s.store.Tx(ctx, func(tx Store) error {
		d, err := s.document(ctx, tx, p, id, false, false)
		if err != nil {
			return err
		}
		var r *Recipient
		for _, x := range d.Recipients {
			if x.ID == recipientID {
				r = x
			}
		}
		if r == nil {
			return gatehouse.Errorf(gatehouse.KindNotFound, "recipient not found")
		}
		if d.OwnerID != p.UserID {
			return gatehouse.Errorf(gatehouse.KindForbidden, "only the document's owner can copy a signing link")
		}
		if err := purged(d); err != nil {
			return err
		}
		link = s.SigningURL(r)
		return s.audit(ctx, tx, p.UserID, d, "document.signing_link_copied", map[string]any{"recipient_id": r.ID})
	})
	return link, err
}

// Duplicate makes a fresh draft owned by the caller with the same file,
// recipients and field placements; nothing of the signing carries over
// (spec 4.6 rule 1).
func (s *Service) Duplicate(ctx context.Context, p *gatehouse.Principal, id string, name *string) (*Document, error) {
	src, err := s.document(ctx, s.store, p, id, true, false)
	if err != nil {
		return nil, err
	}
	if err := purged(src); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	d := &Document{ID: gatehouse.NewID(), OrgID: p.OrgID, OwnerID: p.UserID, Name: src.Name, Message: src.Message, Status: Draft,
		File: bytes.Clone(src.File), Size: src.Size, Pages: src.Pages, Created: now, Modified: now, AutoRemindDays: src.AutoRemindDays}
	if name != nil {
		d.Name = strings.TrimSpace(*name)
		if d.Name == "" || utf8.RuneCountInString(d.Name) > MaxName {
			return nil, gatehouse.Invalid("name must have 1 to %d characters", MaxName)
		}
	}
	ids := map[string]string{}
	for _, r := range src.Recipients {
		c := &Recipient{ID: gatehouse.NewID(), DocumentID: d.ID, Name: r.Name, Email: r.Email, Role: r.Role, OrderIndex: r.OrderIndex,
			Status: ToSign, Token: newToken()}
		ids[r.ID] = c.ID
		d.Recipients = append(d.Recipients, c)
	}
	for _, f := range src.Fields {
		c := *f
		c.ID, c.DocumentID, c.RecipientID, c.Value = gatehouse.NewID(), d.ID, ids[f.RecipientID], nil
		d.Fields = append(d.Fields, &c)
	}
	err = s.store.Tx(ctx, func(tx Store) error {
		if err := tx.CreateDocument(ctx, d); err != nil {
			return gatehouse.Internal("duplicate document", err)
		}
		return s.audit(ctx, tx, p.UserID, d, "document.duplicated", map[string]any{"source_id": src.ID})
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// send queues Sign's flat events in tx: event, documentId, document,
// occurredAt, and recipient on recipient-scoped ones (spec section 6).
func (s *Service) send(ctx context.Context, tx Store, d *Document, evs []event) error {
	if s.events == nil {
		return nil
	}
	for _, e := range evs {
		payload := map[string]any{"event": e.name, "documentId": d.ID, "occurredAt": s.clock.Now().Format(time.RFC3339Nano),
			"document": map[string]any{"id": d.ID, "name": d.Name, "status": d.Status}}
		if r := e.recipient; r != nil {
			payload["recipient"] = map[string]any{"id": r.ID, "name": r.Name, "email": r.Email, "role": r.Role, "status": r.Status}
		}
		if err := s.events.Emit(ctx, tx.Webhooks(), d.OrgID, e.name, payload); err != nil {
			return gatehouse.Internal("queue "+e.name, err)
		}
	}
	return nil
}

func (s *Service) audit(ctx context.Context, tx Store, actor string, d *Document, action string, meta map[string]any) error {
	m, _ := json.Marshal(meta)
	if err := tx.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: d.OrgID, Tool: Tool, Action: Tool + "." + action,
		ActorID: actor, TargetType: "document", TargetID: d.ID, Meta: string(m), At: s.clock.Now()}); err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}
