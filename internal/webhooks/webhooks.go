// Package webhooks registers a workspace's webhooks for a tool and delivers
// its events per spec section 6: JSON POSTed to an HTTPS URL, signed with
// HMAC-SHA256 of the raw body under the webhook's whsec_ secret, a delivery
// id stable across retries, two retries, and the webhook disabled after 20
// failed deliveries in a row.
package webhooks

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/outbound"
)

// Bounds and behaviour of section 6, decided in docs/decisions.md.
const (
	MaxURL          = 2048
	DisableAfter    = 20
	deliveryTimeout = 10 * time.Second
	// PerWorkspace bounds a workspace's webhooks of one tool, so that one
	// event cannot fan out into thousands of deliveries.
	PerWorkspace = 50
	// DialTimeout and HandshakeTimeout bound the connection to a receiver
	// within deliveryTimeout: a receiver that never accepts, or accepts
	// and never completes TLS (a tarpit), holds a worker 3 s, not 10.
	DialTimeout      = 3 * time.Second
	HandshakeTimeout = 3 * time.Second
)

// Webhook is a registered endpoint.
type Webhook struct {
	ID, OrgID, Tool, URL, Secret, CreatedBy string
	Events                                  []string
	Active                                  bool
	Failures                                int
	Created, Modified                       time.Time
}

// Store persists webhooks; ErrNotFound as in workspace.
type Store interface {
	Tx(ctx context.Context, fn func(tx Store) error) error
	OrgLive(ctx context.Context, orgID string) (bool, error)
	CreateWebhook(ctx context.Context, w *Webhook) error
	Webhook(ctx context.Context, orgID, tool, id string) (*Webhook, error)
	ListWebhooks(ctx context.Context, orgID, tool string) ([]*Webhook, error)
	UpdateWebhook(ctx context.Context, w *Webhook) error
	DeleteWebhook(ctx context.Context, orgID, tool, id string) error
	// CountOrgWebhooks counts the workspace's webhooks of the tool and,
	// inside a transaction, keeps every other such count waiting until it
	// ends (as CountWebhooks).
	CountOrgWebhooks(ctx context.Context, orgID, tool string) (int, error)
	// CountWebhooks counts the tool's webhooks createdBy registered and,
	// inside a transaction, keeps every other such count waiting until it
	// ends, so that count-then-create holds the limit under any
	// concurrency, across instances too.
	CountWebhooks(ctx context.Context, tool, createdBy string) (int, error)
	// EnqueueDeliveries queues deliveries as background jobs in the current
	// transaction: they run once it commits, and never if it rolls back.
	EnqueueDeliveries(ctx context.Context, ds []*Delivery) error
	// PendingDeliveries counts the queued deliveries not yet finished
	// (waiting, running or waiting for a retry).
	PendingDeliveries(ctx context.Context) (int, error)
	// DeliveryResult records a delivery's outcome: failures reset to 0 on
	// success, else counted, and the webhook disabled at disableAfter.
	DeliveryResult(ctx context.Context, id string, ok bool, disableAfter int) error
	AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error
}

// Tool describes one tool's webhooks.
type Tool struct {
	Name     string   // "links"
	Events   []string // events a webhook may subscribe to
	Default  []string // subscription when none is given
	Wildcard bool     // "*" allowed
	Retries  []time.Duration
	// Flat: the event's data is the whole payload (Sign); else it is
	// wrapped in {event, at, data} (Links).
	Flat bool
	// PerAccount bounds the webhooks one person registers (0: no bound).
	PerAccount int
}

// Config wires a Service.
type Config struct {
	// Store is the one required; nil Logger and Now are slog.Default()
	// and time.Now.
	Store        Store
	Logger       *slog.Logger
	Now          func() time.Time
	AllowPrivate bool           // GATEHOUSE_WEBHOOK_ALLOW_PRIVATE
	RootCAs      *x509.CertPool // system roots plus GATEHOUSE_WEBHOOK_CA_FILE
	// RetryDelays overrides every tool's retry waits (tests).
	RetryDelays []time.Duration
}

// Service manages and delivers webhooks.
type Service struct {
	store   Store
	log     *slog.Logger
	clock   gatehouse.Clock
	client  *http.Client
	retries []time.Duration
	flight  inFlight
}

// IdleConnsPerHost is how many idle connections to one receiver deliveries
// keep for the next: at least the job engine's workers.
const IdleConnsPerHost = 100

// New returns the webhook service.
func New(c Config) *Service {
	t := outbound.Transport(nil, c.AllowPrivate, c.RootCAs, DialTimeout)
	t.TLSHandshakeTimeout = HandshakeTimeout
	// The job engine works many deliveries at once, most often to one
	// receiver: keep as many of their connections as it has workers, or
	// nearly every delivery pays a new TLS handshake (Go keeps 2 per host).
	t.MaxIdleConnsPerHost = IdleConnsPerHost
	t.MaxIdleConns = max(t.MaxIdleConns, 4*IdleConnsPerHost) // over all receivers (Go's default 100)
	s := &Service{store: c.Store, log: c.Logger, clock: gatehouse.NewClock(c.Now), retries: c.RetryDelays,
		flight: newInFlight(),
		client: &http.Client{Transport: t, Timeout: deliveryTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

var errWebhookNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "webhook not found")

// Input is a webhook create or update body.
type Input struct {
	URL    *string   `json:"url"`
	Events *[]string `json:"events"`
	Active *bool     `json:"active"`
}

func checkURL(raw string) (string, error) {
	out, ok := outbound.ParseURL(raw, MaxURL, "https")
	if !ok {
		return "", gatehouse.Invalid("url must be an https URL of at most %d bytes", MaxURL)
	}
	return out, nil
}

func (t *Tool) checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, gatehouse.Invalid("events must list at least one event")
	}
	var out []string
	for _, e := range events {
		switch {
		case e == "*" && t.Wildcard:
		case e == "*":
			return nil, gatehouse.Invalid("the %s tool does not accept the wildcard *", t.Name)
		case !slices.Contains(t.Events, e):
			return nil, gatehouse.Invalid("unknown event %q: events are %s", e, strings.Join(t.Events, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Create registers a webhook; the answer carries its secret, shown once.
func (s *Service) Create(ctx context.Context, t *Tool, p *gatehouse.Principal, in *Input) (*Webhook, error) {
	if in.URL == nil || *in.URL == "" {
		return nil, gatehouse.Invalid("url is required")
	}
	target, err := checkURL(*in.URL)
	if err != nil {
		return nil, err
	}
	events := t.Default
	if in.Events != nil {
		var err error
		if events, err = t.checkEvents(*in.Events); err != nil {
			return nil, err
		}
	}
	var b [32]byte
	rand.Read(b[:])
	now := s.clock.Now()
	w := &Webhook{ID: gatehouse.NewID(), OrgID: p.OrgID, Tool: t.Name, URL: target, Events: events,
		Secret: "whsec_" + base64.RawURLEncoding.EncodeToString(b[:]), Active: in.Active == nil || *in.Active,
		CreatedBy: p.UserID, Created: now, Modified: now}
	err = s.store.Tx(ctx, func(tx Store) error {
		if live, err := tx.OrgLive(ctx, p.OrgID); err != nil {
			return gatehouse.Internal("find org", err)
		} else if !live {
			return gatehouse.Errorf(gatehouse.KindNotFound, "organization not found")
		}
		if n, err := tx.CountOrgWebhooks(ctx, p.OrgID, t.Name); err != nil {
			return gatehouse.Internal("count webhooks", err)
		} else if n >= PerWorkspace {
			return gatehouse.Errorf(gatehouse.KindConflict, "at most %d %s webhooks per workspace", PerWorkspace, t.Name)
		}
		if t.PerAccount > 0 {
			n, err := tx.CountWebhooks(ctx, t.Name, p.UserID)
			if err != nil {
				return gatehouse.Internal("count webhooks", err)
			}
			if n >= t.PerAccount {
				return gatehouse.Errorf(gatehouse.KindConflict, "at most %d %s webhooks per account", t.PerAccount, t.Name)
			}
		}
		if err := tx.CreateWebhook(ctx, w); err != nil {
			return gatehouse.Internal("create webhook", err)
		}
		return s.audit(ctx, tx, p, w, "webhook.created", map[string]any{"url": w.URL, "events": w.Events})
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (s *Service) webhook(ctx context.Context, st Store, t *Tool, p *gatehouse.Principal, id string) (*Webhook, error) {
	if !gatehouse.IsID(id) {
		return nil, errWebhookNotFound
	}
	w, err := st.Webhook(ctx, p.OrgID, t.Name, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errWebhookNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find webhook", err)
	}
	return w, nil
}

// List lists the workspace's webhooks of the tool, oldest first.
func (s *Service) List(ctx context.Context, t *Tool, p *gatehouse.Principal) ([]*Webhook, error) {
	ws, err := s.store.ListWebhooks(ctx, p.OrgID, t.Name)
	if err != nil {
		return nil, gatehouse.Internal("list webhooks", err)
	}
	return ws, nil
}

// Update changes url, events or active; active true re-enables a disabled
// webhook and resets its failure count.
func (s *Service) Update(ctx context.Context, t *Tool, p *gatehouse.Principal, id string, in *Input) (*Webhook, error) {
	var out *Webhook
	err := s.store.Tx(ctx, func(tx Store) error {
		w, err := s.webhook(ctx, tx, t, p, id)
		if err != nil {
			return err
		}
		if in.URL != nil {
			if w.URL, err = checkURL(*in.URL); err != nil {
				return err
			}
		}
		if in.Events != nil {
			if w.Events, err = t.checkEvents(*in.Events); err != nil {
				return err
			}
		}
		if in.Active != nil {
			w.Active = *in.Active
			if w.Active {
				w.Failures = 0
			}
		}
		w.Modified = s.clock.Now()
		if err := tx.UpdateWebhook(ctx, w); errors.Is(err, gatehouse.ErrNotFound) {
			return errWebhookNotFound
		} else if err != nil {
			return gatehouse.Internal("update webhook", err)
		}
		out = w
		return s.audit(ctx, tx, p, w, "webhook.updated", map[string]any{"url": w.URL, "events": w.Events, "active": w.Active})
	})
	return out, err
}

// Delete removes a webhook.
func (s *Service) Delete(ctx context.Context, t *Tool, p *gatehouse.Principal, id string) error {
	return s.store.Tx(ctx, func(tx Store) error {
		w, err := s.webhook(ctx, tx, t, p, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteWebhook(ctx, p.OrgID, t.Name, w.ID); errors.Is(err, gatehouse.ErrNotFound) {
			return errWebhookNotFound
		} else if err != nil {
			return gatehouse.Internal("delete webhook", err)
		}
		return s.audit(ctx, tx, p, w, "webhook.deleted", map[string]any{"url": w.URL})
	})
}

// Ping sends a ping event to one webhook, active or not.
func (s *Service) Ping(ctx context.Context, t *Tool, p *gatehouse.Principal, id string) (*Webhook, error) {
	w, err := s.webhook(ctx, s.store, t, p, id)
	if err != nil {
		return nil, err
	}
	data := any(map[string]any{"webhookId": w.ID})
	if t.Flat {
		data = map[string]any{"event": "ping", "webhookId": w.ID, "occurredAt": s.clock.Now().Format(time.RFC3339Nano)}
	}
	err = s.store.Tx(ctx, func(tx Store) error { return s.enqueue(ctx, tx, t, []*Webhook{w}, "ping", data) })
	if err != nil {
		return nil, gatehouse.Internal("queue ping", err)
	}
	return w, nil
}

func (s *Service) audit(ctx context.Context, tx Store, p *gatehouse.Principal, w *Webhook, action string, meta map[string]any) error {
	m, _ := json.Marshal(meta)
	if err := tx.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: w.OrgID, Tool: w.Tool,
		Action: w.Tool + "." + action, ActorID: p.UserID, TargetType: "webhook", TargetID: w.ID, Meta: string(m), At: s.clock.Now()}); err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}

// Links is the Links tool's webhooks (spec section 6).
var Links = &Tool{Name: "links",
	Events:  []string{"link.created", "link.updated", "link.deleted", "link.clicked", "link.converted"},
	Default: []string{"link.created", "link.updated", "link.deleted"},
	Retries: []time.Duration{time.Second, 5 * time.Second}}

// Sign is the Sign tool's webhooks (spec section 6, section 8: 10 per
// account).
var Sign = &Tool{Name: "sign",
	Events:   []string{"document.sent", "document.viewed", "document.signed", "document.declined", "document.completed", "document.voided", "document.expired"},
	Default:  []string{"*"},
	Wildcard: true, Flat: true, PerAccount: 10,
	Retries: []time.Duration{5 * time.Second, 20 * time.Second}}
