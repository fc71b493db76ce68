// Package links is the Links tool API of TOOLS.md: a workspace's short
// links, the public redirect that counts clicks and hands each click an
// id, and conversions attributed to a click, with their webhook events.
package links

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/outbound"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// Tool is the tool name tokens list to reach this API.
const Tool = "links"

// Bounds, decided in docs/decisions.md.
const (
	MaxURL       = 2048
	MaxTitle     = 200
	MaxEventName = 100
	codeLength   = 7
)

var shortCodePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Link is a short link.
type Link struct {
	ID, OrgID, ShortCode, DestinationURL, Title, CreatedBy string
	Active, Archived                                       bool
	Clicks                                                 int64
	Created, Modified                                      time.Time
}

// Click is one followed redirect.
type Click struct {
	ID, LinkID string
	At         time.Time
}

// Conversion is an outcome attributed to a click.
type Conversion struct {
	ID, ClickID, LinkID, Name string
	AmountCents               *int64
	Currency                  string
	Created                   time.Time
}

// Store persists Links; ErrNotFound and ErrConflict as in workspace.
type Store interface {
	Tx(ctx context.Context, fn func(tx Store) error) error
	OrgLive(ctx context.Context, orgID string) (bool, error)
	CreateLink(ctx context.Context, l *Link) error // ErrConflict: short code taken
	// Link reads a link of orgID in a live org.
	Link(ctx context.Context, orgID, id string) (*Link, error)
	ListLinks(ctx context.Context, orgID string) ([]*Link, error)
	UpdateLink(ctx context.Context, l *Link) error
	DeleteLink(ctx context.Context, orgID, id string) error
	// Follow records a click on the active, unarchived link of a live org
	// with code, counting it in the link's clicks and unreported clicks,
	// and returns the link with the org's stored switch of the links tool
	// (nil: never set); ErrNotFound when there is no such link. The caller
	// applies gatehouse.ToolOn and rolls the click back when the tool is
	// off.
	Follow(ctx context.Context, code string, c *Click) (l *Link, switched *bool, err error)
	// ClickLink returns the link of a click and when it was clicked, if
	// the click is orgID's.
	ClickLink(ctx context.Context, orgID, clickID string) (*Link, time.Time, error)
	AddConversion(ctx context.Context, c *Conversion) error
	// UnreportedLinks lists the ids of links of live orgs with unreported
	// clicks (at most limit).
	UnreportedLinks(ctx context.Context, limit int) ([]string, error)
	// ClaimClicks locks a link until the transaction ends and takes its
	// unreported clicks off: it returns the link (clicks is the running
	// total) and how many there were; ErrNotFound when it is gone.
	ClaimClicks(ctx context.Context, id string) (*Link, int64, error)
	AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error
	// Webhooks is the webhooks' store on the same connection or
	// transaction, through which events are queued.
	Webhooks() webhooks.Store
}

// Events queues the tool's webhook events in the transaction of the
// change they announce (tx is that transaction's webhooks store).
type Events interface {
	Emit(ctx context.Context, tx webhooks.Store, orgID, event string, data any) error
}

// Service is the Links tool.
type Service struct {
	store Store
	clock gatehouse.Clock
	base  string // GATEHOUSE_SHORT_LINK_URL
	// ours are the host names of the accounts service (SetAccountsURLs).
	ours map[string]bool

	events Events
}

// SetEvents sends webhook events through events; the clicks counted on
// a link are announced by Announce (clicks.go), called every window by a
// schedule.
func (s *Service) SetEvents(events Events) {
	s.events = events
}

// emit queues event in tx, the transaction of the change.
func (s *Service) emit(ctx context.Context, tx Store, orgID, event string, data any) error {
	if s.events == nil {
		return nil
	}
	if err := s.events.Emit(ctx, tx.Webhooks(), orgID, event, data); err != nil {
		return gatehouse.Internal("queue "+event, err)
	}
	return nil
}

func linkData(l *Link) map[string]any {
	return map[string]any{"id": l.ID, "shortCode": l.ShortCode, "destinationUrl": l.DestinationURL, "title": l.Title,
		"active": l.Active, "archived": l.Archived}
}

// New returns the Links tool; shortLinkURL is GATEHOUSE_SHORT_LINK_URL, now
// nil means time.Now.
func New(store Store, shortLinkURL string, now func() time.Time) *Service {
	return &Service{store: store, clock: gatehouse.NewClock(now), base: strings.TrimRight(shortLinkURL, "/")}
}

// ShortURL is the public URL of a short code.
func (s *Service) ShortURL(code string) string { return s.base + "/" + code }

var errLinkNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "link not found")

// Input is a link create or update body; nil fields are absent.
type Input struct {
	DestinationURL *string `json:"destinationUrl"`
	Title          *string `json:"title"`
	ShortCode      *string `json:"shortCode"`
	Active         *bool   `json:"active"`
	Archived       *bool   `json:"archived"`
}

func destination(raw string) (string, error) {
	out, ok := outbound.ParseURL(raw, MaxURL, "http", "https")
	if !ok {
		return "", gatehouse.Invalid("destinationUrl must be an absolute http(s) URL of at most %d bytes", MaxURL)
	}
	return out, nil
}

func (in *Input) apply(l *Link) error {
	if in.DestinationURL != nil {
		d, err := destination(*in.DestinationURL)
		if err != nil {
			return err
		}
		l.DestinationURL = d
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if utf8.RuneCountInString(t) > MaxTitle {
			return gatehouse.Invalid("title is longer than %d characters", MaxTitle)
		}
		l.Title = t
	}
	if in.Active != nil {
		l.Active = *in.Active
	}
	if in.Archived != nil {
		l.Archived = *in.Archived
	}
	return nil
}

// Create adds a link to the caller's workspace; without a shortCode one is
// made up.
func (s *Service) Create(ctx context.Context, p *gatehouse.Principal, in *Input) (*Link, error) {
	if in.DestinationURL == nil || *in.DestinationURL == "" {
		return nil, gatehouse.Invalid("destinationUrl is required")
	}
	now := s.clock.Now()
	l := &Link{ID: gatehouse.NewID(), OrgID: p.OrgID, CreatedBy: p.UserID, Active: true, Created: now, Modified: now}
	if err := in.apply(l); err != nil {
		return nil, err
	}
	given := in.ShortCode != nil && *in.ShortCode != ""
	if given {
		if !shortCodePattern.MatchString(*in.ShortCode) {
			return nil, gatehouse.Invalid("shortCode must be 1 to 64 letters, digits, - or _")
		}
		l.ShortCode = *in.ShortCode
	}
	for attempt := 0; ; attempt++ {
		if !given {
			l.ShortCode = randomCode()
		}
		err := s.store.Tx(ctx, func(tx Store) error {
			if live, err := tx.OrgLive(ctx, p.OrgID); err != nil {
				return gatehouse.Internal("find org", err)
			} else if !live {
				return gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")
			}
			if err := tx.CreateLink(ctx, l); err != nil {
				return err
			}
			if err := s.audit(ctx, tx, p, l.OrgID, "link.created", "link", l.ID, map[string]any{"shortCode": l.ShortCode, "destinationUrl": l.DestinationURL}); err != nil {
				return err
			}
			return s.emit(ctx, tx, l.OrgID, "link.created", linkData(l))
		})
		switch {
		case errors.Is(err, gatehouse.ErrConflict) && given:
			return nil, gatehouse.Errorf(gatehouse.KindConflict, "shortCode %q is taken", l.ShortCode)
		case errors.Is(err, gatehouse.ErrConflict) && attempt < 5:
			continue // a made-up code collided: draw again
		case err != nil:
			return nil, gatehouse.Internal("create link", err)
		}
		return l, nil
	}
}

const codeAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomCode draws a short code (62^7, about 3.5e12 codes).
func randomCode() string {
	b := make([]byte, codeLength)
	rand.Read(b)
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// Get reads a link of the caller's workspace.
func (s *Service) Get(ctx context.Context, p *gatehouse.Principal, id string) (*Link, error) {
	return s.link(ctx, s.store, p, id)
}

func (s *Service) link(ctx context.Context, st Store, p *gatehouse.Principal, id string) (*Link, error) {
	if !gatehouse.IsID(id) {
		return nil, errLinkNotFound
	}
	l, err := st.Link(ctx, p.OrgID, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errLinkNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find link", err)
	}
	return l, nil
}

// List lists the workspace's links, newest first.
func (s *Service) List(ctx context.Context, p *gatehouse.Principal) ([]*Link, error) {
	ls, err := s.store.ListLinks(ctx, p.OrgID)
	if err != nil {
		return nil, gatehouse.Internal("list links", err)
	}
	return ls, nil
}

// Update edits a link (not its short code).
func (s *Service) Update(ctx context.Context, p *gatehouse.Principal, id string, in *Input) (*Link, error) {
	if in.ShortCode != nil {
		return nil, gatehouse.Invalid("shortCode cannot be changed")
	}
	if in.DestinationURL != nil && *in.DestinationURL == "" {
		return nil, gatehouse.Invalid("destinationUrl must not be empty")
	}
	var out *Link
	err := s.store.Tx(ctx, func(tx Store) error {
		l, err := s.link(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if err := in.apply(l); err != nil {
			return err
		}
		l.Modified = s.clock.Now()
		if err := tx.UpdateLink(ctx, l); errors.Is(err, gatehouse.ErrNotFound) {
			return errLinkNotFound
		} else if err != nil {
			return gatehouse.Internal("update link", err)
		}
		out = l
		if err := s.audit(ctx, tx, p, l.OrgID, "link.updated", "link", l.ID, map[string]any{"destinationUrl": l.DestinationURL,
			"title": l.Title, "active": l.Active, "archived": l.Archived}); err != nil {
			return err
		}
		return s.emit(ctx, tx, l.OrgID, "link.updated", linkData(l))
	})
	return out, err
}

// Delete removes a link with its clicks and conversions.
func (s *Service) Delete(ctx context.Context, p *gatehouse.Principal, id string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		l, err := s.link(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteLink(ctx, p.OrgID, l.ID); errors.Is(err, gatehouse.ErrNotFound) {
			return errLinkNotFound
		} else if err != nil {
			return gatehouse.Internal("delete link", err)
		}
		if err := s.audit(ctx, tx, p, l.OrgID, "link.deleted", "link", l.ID, map[string]any{"shortCode": l.ShortCode}); err != nil {
			return err
		}
		return s.emit(ctx, tx, l.OrgID, "link.deleted", linkData(l))
	})
}

// Follow records a click on the link of code and returns where to send
// the visitor: the destination with the click's id in svc_click.
func (s *Service) Follow(ctx context.Context, code string) (string, error) {
	if !shortCodePattern.MatchString(code) {
		return "", errLinkNotFound
	}
	c := &Click{ID: gatehouse.NewID(), At: s.clock.Now()}
	var l *Link
	err := s.store.Tx(ctx, func(tx Store) error {
		var switched *bool
		var err error
		if l, switched, err = tx.Follow(ctx, code, c); err == nil && !gatehouse.ToolOn(switched) {
			// Links is off in the workspace: the visitor has no token to
			// be refused with, so the link is not found.
			return gatehouse.ErrNotFound
		}
		return err
	})
	if errors.Is(err, gatehouse.ErrNotFound) {
		return "", errLinkNotFound
	}
	if err != nil {
		return "", gatehouse.Internal("follow link", err)
	}
	// Appended to the query as it is: re-encoding would reorder it and
	// drop pairs Go's parser refuses.
	u, err := url.Parse(l.DestinationURL)
	if err != nil {
		return "", gatehouse.Internal("destination", err)
	}
	if u.RawQuery == "" {
		u.RawQuery = "svc_click=" + c.ID
	} else {
		u.RawQuery += "&svc_click=" + c.ID
	}
	return u.String(), nil
}

// ConversionInput is the body of a conversion.
type ConversionInput struct {
	ClickID     *string `json:"clickId"`
	Name        *string `json:"name"`
	AmountCents *int64  `json:"amountCents"`
	Currency    *string `json:"currency"`
}

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// Convert records a conversion for a click on one of the workspace's links.
func (s *Service) Convert(ctx context.Context, p *gatehouse.Principal, in *ConversionInput) (*Conversion, error) {
	if in.ClickID == nil || *in.ClickID == "" {
		return nil, gatehouse.Invalid("clickId is required")
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, gatehouse.Invalid("name is required")
	}
	name := strings.TrimSpace(*in.Name)
	if err := gatehouse.CheckOneLine("name", name); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(name) > MaxEventName {
		return nil, gatehouse.Invalid("name is longer than %d characters", MaxEventName)
	}
	c := &Conversion{ID: gatehouse.NewID(), ClickID: *in.ClickID, Name: name, AmountCents: in.AmountCents, Created: s.clock.Now()}
	if c.AmountCents != nil && *c.AmountCents < 0 {
		return nil, gatehouse.Invalid("amountCents must not be negative")
	}
	if in.Currency != nil {
		c.Currency = strings.ToUpper(strings.TrimSpace(*in.Currency))
		if !currencyPattern.MatchString(c.Currency) {
			return nil, gatehouse.Invalid("currency must be a three-letter ISO 4217 code")
		}
	}
	if !gatehouse.IsID(c.ClickID) {
		return nil, gatehouse.Errorf(gatehouse.KindNotFound, "click not found")
	}
	err := s.store.Tx(ctx, func(tx Store) error {
		link, clicked, err := tx.ClickLink(ctx, p.OrgID, c.ClickID)
		if errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "click not found")
		}
		if err != nil {
			return gatehouse.Internal("find click", err)
		}
		c.LinkID = link.ID
		if err := tx.AddConversion(ctx, c); errors.Is(err, gatehouse.ErrNotFound) {
			return gatehouse.Errorf(gatehouse.KindNotFound, "click not found")
		} else if err != nil {
			return gatehouse.Internal("add conversion", err)
		}
		if err := s.audit(ctx, tx, p, p.OrgID, "conversion.created", "conversion", c.ID, map[string]any{"clickId": c.ClickID, "name": c.Name}); err != nil {
			return err
		}
		return s.emit(ctx, tx, p.OrgID, "link.converted", map[string]any{"link": map[string]any{"id": link.ID, "shortCode": link.ShortCode},
			"conversion": map[string]any{"id": c.ID, "name": c.Name, "amountCents": c.AmountCents, "currency": nullable(c.Currency)},
			"clickId":    c.ClickID, "clickedAt": clicked.Format(time.RFC3339Nano), "convertedAt": c.Created.Format(time.RFC3339Nano)})
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Service) audit(ctx context.Context, tx Store, p *gatehouse.Principal, orgID, action, targetType, targetID string, meta map[string]any) error {
	m, _ := json.Marshal(meta)
	if err := tx.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: orgID, Tool: Tool, Action: Tool + "." + action,
		ActorID: p.UserID, TargetType: targetType, TargetID: targetID, Meta: string(m), At: s.clock.Now()}); err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}
