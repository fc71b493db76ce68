package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/seal"
)

// Delivery is one event on its way to one webhook: a background job
// (internal/jobs works it) inserted in the transaction of the change that
// caused the event. Its id is the X-Service-Delivery header of every try,
// across retries and restarts. The body is kept as sent; the signature is
// computed at each try from the webhook's secret, which never enters the
// job queue. In the queue the body is sealed (Seal): a Sign event names
// its recipients, whose names and addresses are not kept there in clear.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhookId"`
	OrgID     string `json:"orgId"`
	Tool      string `json:"tool"`
	Event     string `json:"event"`
	Body      string `json:"body,omitempty"`
	// Sealed is Body sealed for the queue (Seal), Body then empty.
	Sealed []byte `json:"sealed,omitempty"`
	// Tries is how many times it is tried at most: once and then each
	// retry of the tool.
	Tries int `json:"tries"`
}

// Seal returns d as queued: its body sealed by box (seal.New(master,
// "webhook")) under the delivery's id, so a body copied to another job
// does not open there. A nil box leaves it in clear.
func (d Delivery) Seal(box *seal.Box) Delivery {
	if box == nil || d.Body == "" {
		return d
	}
	d.Sealed, d.Body = box.Seal([]byte(d.Body), sealContext(d.ID)), ""
	return d
}

// Open restores the body of d as queued (Seal), in place; a delivery
// queued in clear is left as it is.
func (d *Delivery) Open(box *seal.Box) error {
	if len(d.Sealed) == 0 {
		return nil
	}
	if box == nil {
		return errors.New("webhook delivery: sealed body and no key to open it")
	}
	plain, err := box.Open(d.Sealed, sealContext(d.ID))
	if err != nil {
		return fmt.Errorf("webhook delivery: %w", err)
	}
	d.Body, d.Sealed = string(plain), nil
	return nil
}

func sealContext(id string) []byte { return []byte("webhook delivery " + id) }

// DeliveryKind names webhook deliveries in the job queue.
const DeliveryKind = "webhook.delivery"

// Kind names the job's kind in the queue.
func (Delivery) Kind() string { return DeliveryKind }

// ErrGone reports that a delivery's webhook no longer exists: the delivery
// is dropped, with any retries it had left.
var ErrGone = errors.New("webhook deleted")

// ErrBusy reports that a delivery was not tried: its workspace or its
// receiver already has as many deliveries in flight on this instance as
// it may (InFlightPerWorkspace, InFlightPerHost). The job engine tries it
// again shortly, without counting a failed try.
var ErrBusy = errors.New("webhook deliveries of this workspace or to this receiver are at their limit")

// ErrMoving is ErrBusy for a workspace and receiver whose deliveries in
// flight are ending as others wait: the delivery is tried again soon,
// not after ErrBusy's growing waits.
var ErrMoving = errors.New("webhook deliveries of this workspace or to this receiver are at their limit, and moving")

// receiver is the host and port a webhook URL points at, lower case.
func receiver(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Host)
}

// tools are the tools with webhooks, by name.
var tools = map[string]*Tool{Links.Name: Links, Sign.Name: Sign}

// ToolEvents emits one tool's events.
type ToolEvents struct {
	s *Service
	t *Tool
}

// For returns the emitter of tool t's events.
func (s *Service) For(t *Tool) ToolEvents { return ToolEvents{s, t} }

// Emit queues event with data for every active webhook of the workspace
// subscribed to it, in tx: the transaction of the change the event
// announces (or, outside one, a transaction of its own). A failure is
// logged here too, for callers with no request to fail.
func (e ToolEvents) Emit(ctx context.Context, tx Store, orgID, event string, data any) error {
	err := tx.Tx(ctx, func(tx Store) error {
		ws, err := tx.ListWebhooks(ctx, orgID, e.t.Name)
		if err != nil {
			return fmt.Errorf("read webhooks: %w", err)
		}
		ws = slices.DeleteFunc(ws, func(w *Webhook) bool {
			return !w.Active || !slices.Contains(w.Events, event) && !slices.Contains(w.Events, "*")
		})
		return e.s.enqueue(ctx, tx, e.t, ws, event, data)
	})
	if err != nil {
		e.s.log.Error("webhook event not queued", "event", event, "org_id", orgID, "err", err)
	}
	return err
}

// enqueue queues one delivery of event to each of ws.
func (s *Service) enqueue(ctx context.Context, tx Store, t *Tool, ws []*Webhook, event string, data any) error {
	if len(ws) == 0 {
		return nil
	}
	var payload any = map[string]any{"event": event, "at": s.clock.Now().Format(time.RFC3339Nano), "data": data}
	if t.Flat {
		payload = data
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("webhook payload: %w", err)
	}
	ds := make([]*Delivery, len(ws))
	for i, w := range ws {
		ds[i] = &Delivery{ID: uuid.NewString(), WebhookID: w.ID, OrgID: w.OrgID, Tool: t.Name, Event: event, Body: string(body),
			Tries: 1 + len(s.waits(t))}
	}
	return tx.EnqueueDeliveries(ctx, ds)
}

// waits are tool t's waits before each retry.
func (s *Service) waits(t *Tool) []time.Duration {
	if s.retries != nil {
		return s.retries
	}
	return t.Retries
}

// RetryDelay is how long d waits after its try number attempt (from 1)
// failed: the tool's schedule of section 6.
func (s *Service) RetryDelay(d *Delivery, attempt int) time.Duration {
	t := tools[d.Tool]
	if t == nil {
		return time.Second
	}
	waits := s.waits(t)
	if len(waits) == 0 {
		return time.Second
	}
	return waits[min(max(attempt, 1), len(waits))-1]
}

// Deliver makes try number attempt (from 1) of d: nil when the receiver
// answered 2xx, ErrGone when the webhook was deleted, else an error, and
// the caller tries again later while tries are left. The webhook's
// consecutive-failure count is updated once per delivery: reset on
// success, counted when the last try fails. A success finds the count
// as read before its try: at 0 (the usual case) it writes nothing, one
// round trip fewer on the shared pool per delivery; a failure counted
// during that try is reset by the next success instead.
//
// A delivery whose workspace or receiver is at its limit of deliveries
// in flight waits a little for a place while theirs are moving, and is
// otherwise not tried: ErrMoving or ErrBusy.
func (s *Service) Deliver(ctx context.Context, d *Delivery, attempt int) error {
	if s.flight.stuck(d.OrgID) {
		return ErrBusy
	}
	w, err := s.store.Webhook(ctx, d.OrgID, d.Tool, d.WebhookID)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return ErrGone
	}
	if err != nil {
		return fmt.Errorf("read webhook: %w", err)
	}
	host := receiver(w.URL)
	if err := s.flight.take(ctx, d.OrgID, host); err != nil {
		return err
	}
	failure := s.post(ctx, w, d)
	s.flight.release(d.OrgID, host)
	if failure != nil && attempt < d.Tries {
		return failure
	}
	if failure != nil || w.Failures != 0 {
		if err := s.store.DeliveryResult(ctx, w.ID, failure == nil, DisableAfter); err != nil {
			s.log.Error("webhook delivery result not stored", "webhook_id", w.ID, "err", err)
		}
	}
	if failure != nil {
		s.log.Warn("webhook delivery dropped after retries", "webhook_id", w.ID, "event", d.Event, "delivery", d.ID)
	}
	return failure
}

// post sends d to w once; nil when w answered 2xx.
func (s *Service) post(ctx context.Context, w *Webhook, d *Delivery) error {
	mac := hmac.New(sha256.New, []byte(w.Secret))
	mac.Write([]byte(d.Body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader([]byte(d.Body)))
	if err != nil {
		return fmt.Errorf("webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Gatehouse-Webhooks/1")
	req.Header.Set("X-Service-Event", d.Event)
	req.Header.Set("X-Service-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-Service-Delivery", d.ID)
	res, err := s.client.Do(req)
	if err != nil {
		// The *url.Error names the URL, whose query may hold a secret:
		// the job's error, logged and kept in the queue, must not.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("webhook post to webhook %s: %w", w.ID, err)
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("webhook answered %d", res.StatusCode)
	}
	return nil
}

// Wait blocks until every queued delivery has ended (retries included),
// or a minute has passed. The tests call it; deliveries are worked by the
// job engine.
func (s *Service) Wait() {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if n, err := s.store.PendingDeliveries(context.Background()); err == nil && n == 0 {
			return
		}
	}
	s.log.Warn("webhook deliveries still queued after a minute of waiting")
}
