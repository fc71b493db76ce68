package webhooks_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// TestSignWebhookLimitAtOnce checks that 20 concurrent creations by one
// account register exactly 10 Sign webhooks (issue 12, fix 6a).
func TestSignWebhookLimitAtOnce(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		resp := testenv.AtOnceAnswers(20, func(i int) *testenv.Resp {
			return env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i)})
		})
		codes := map[int]int{}
		for _, r := range resp {
			codes[r.Status]++
		}
		if codes[200] != 10 || codes[409] != 10 {
			t.Errorf("answers = %v; want 10 × 200 and 10 × 409", codes)
		}
		if n := len(env.Do(t, "GET", "/sign/v1/webhooks", owner.Token, nil).Want(t, 200).Get("webhooks").([]any)); n != 10 {
			t.Errorf("%d webhooks registered; want 10", n)
		}
	})
}

// queuedDeliveries returns the delivery jobs queued for webhook id, by
// delivery id.
func queuedDeliveries(t *testing.T, db *sqlstore.DB, webhookID string) []string {
	t.Helper()
	args := "CAST(args AS TEXT)"
	if db.Dialect() == "sqlite" {
		args = "json(args)" // River keeps SQLite's binary JSONB
	}
	rows, err := db.DB().Query(`SELECT `+args+` FROM river_job WHERE kind = $1`, webhooks.DeliveryKind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var args string
		if err := rows.Scan(&args); err != nil {
			t.Fatal(err)
		}
		var d webhooks.Delivery
		if err := json.Unmarshal([]byte(args), &d); err != nil {
			t.Fatal(err)
		}
		if d.WebhookID == webhookID {
			out = append(out, d.ID)
		}
	}
	return out
}

// TestWebhookEventsInTransaction checks that an event is queued in the
// transaction of its change: a rolled-back change queues no delivery, a
// committed one queues one per subscribed webhook.
func TestWebhookEventsInTransaction(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		hookID := env.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": "https://hooks.example.com/tx"}).Want(t, 200).Str("webhook.id")
		// A queue no engine works: the committed job stays queued.
		db := env.SQL.OnQueue("unworked_" + testenv.RandomHex(4))
		events := webhooks.New(webhooks.Config{Store: db.Webhooks()}).For(webhooks.Links)
		errRollback := errors.New("roll back")
		err := db.Links().Tx(context.Background(), func(tx links.Store) error {
			if err := events.Emit(context.Background(), tx.Webhooks(), org, "link.created", map[string]any{"id": "x"}); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("tx = %v", err)
		}
		if got := queuedDeliveries(t, env.SQL, hookID); len(got) != 0 {
			t.Errorf("after a rollback %d deliveries queued; want none", len(got))
		}
		err = db.Links().Tx(context.Background(), func(tx links.Store) error {
			return events.Emit(context.Background(), tx.Webhooks(), org, "link.created", map[string]any{"id": "x"})
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := queuedDeliveries(t, env.SQL, hookID); len(got) != 1 {
			t.Errorf("after a commit %d deliveries queued; want 1", len(got))
		}
	})
}

// TestWebhookDeliverySurvivesRestart checks that a delivery committed while
// no engine ran (its process died first) is delivered by the next engine,
// and that a retry after a restart keeps the delivery id.
func TestWebhookDeliverySurvivesRestart(t *testing.T) {
	got := make(chan string, 10)
	fail := make(chan bool, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("X-Service-Delivery")
		select {
		case <-fail:
			http.Error(w, "down", http.StatusInternalServerError)
		default:
		}
	}))
	defer srv.Close()
	roots := x509Pool(srv)
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		fail <- true // the first try of each database's run fails
		owner, org := env.Team(t)
		hookID := env.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": srv.URL + "/h"}).Want(t, 200).Str("webhook.id")
		db := env.SQL.OnQueue("restart_" + testenv.RandomHex(4))
		svc := webhooks.New(webhooks.Config{Store: db.Webhooks(), AllowPrivate: true, RootCAs: roots,
			RetryDelays: []time.Duration{300 * time.Millisecond, 300 * time.Millisecond}})
		if err := svc.For(webhooks.Links).Emit(context.Background(), db.Webhooks(), org, "link.created", map[string]any{"id": "x"}); err != nil {
			t.Fatal(err)
		}
		queued := queuedDeliveries(t, env.SQL, hookID)
		if len(queued) != 1 {
			t.Fatalf("%d deliveries queued; want 1", len(queued))
		}
		start := func() *jobs.Engine {
			e, err := jobs.New(context.Background(), jobs.Config{DB: db, Webhooks: svc, PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			return e
		}
		first := start()
		if id := receive(t, got); id != queued[0] {
			t.Errorf("first try's delivery id = %q; want the queued %q", id, queued[0])
		}
		if err := first.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		second := start()
		defer second.Stop(context.Background())
		if id := receive(t, got); id != queued[0] {
			t.Errorf("retry after the restart: delivery id = %q; want %q", id, queued[0])
		}
		svc.Wait()
		if h := env.Do(t, "GET", "/links/v1/webhooks", owner.Token, nil).Want(t, 200).Get("webhooks").([]any)[0].(map[string]any); h["failures"] != float64(0) {
			t.Errorf("webhook after a delivered retry = %v; want 0 failures", h)
		}
	})
}

func receive(t *testing.T, got chan string) string {
	t.Helper()
	select {
	case id := <-got:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery within 20 s")
		return ""
	}
}

func x509Pool(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}
