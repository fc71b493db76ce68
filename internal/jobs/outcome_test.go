package jobs_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/jobs"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// oneWebhook is a webhooks.Store holding one webhook; the deliveries read
// only it and store their result.
type oneWebhook struct {
	webhooks.Store
	w *webhooks.Webhook
}

func (s oneWebhook) Webhook(context.Context, string, string, string) (*webhooks.Webhook, error) {
	return s.w, nil
}

func (s oneWebhook) DeliveryResult(context.Context, string, bool, int) error { return nil }

// TestDeliveryOutcomeLogged checks that a failed delivery's outcome is
// logged with its kind and job id, and without the webhook's URL query,
// its secret or the delivery's body.
func TestDeliveryOutcomeLogged(t *testing.T) {
	for _, name := range testenv.Databases {
		t.Run(name, func(t *testing.T) {
			db := testenv.OpenDB(t, name).OnQueue("outcome_" + testenv.RandomHex(4))
			var logs testenv.LockedBuffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			hook := &webhooks.Webhook{ID: "wh1", OrgID: "o1", Tool: "links", Active: true,
				URL: "https://127.0.0.1:1/hook?token=url-secret-q", Secret: "signing-secret-s"}
			svc := webhooks.New(webhooks.Config{Store: oneWebhook{w: hook}, Logger: log, AllowPrivate: true})
			e, err := jobs.New(context.Background(), jobs.Config{DB: db, Logger: log, Webhooks: svc, PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer e.Stop(context.Background())
			d := &webhooks.Delivery{ID: "dl1", WebhookID: "wh1", OrgID: "o1", Tool: "links", Event: "link.created",
				Body: `{"mail":"body-text-b"}`, Tries: 1}
			if err := db.Webhooks().EnqueueDeliveries(context.Background(), []*webhooks.Delivery{d}); err != nil {
				t.Fatal(err)
			}
			var line string
			for end := time.Now().Add(20 * time.Second); line == "" && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				for _, l := range strings.Split(logs.String(), "\n") {
					if strings.Contains(l, "outcome=") {
						line = l
					}
				}
			}
			if line == "" {
				t.Fatalf("no outcome logged in 20 s; log:\n%s", logs.String())
			}
			t.Log(line)
			for _, want := range []string{"kind=" + webhooks.DeliveryKind, "job_id=", "attempt=1", "outcome=discarded", "duration="} {
				if !strings.Contains(line, want) {
					t.Errorf("outcome line %q lacks %q", line, want)
				}
			}
			for _, secret := range []string{"url-secret-q", "signing-secret-s", "body-text-b"} {
				if strings.Contains(logs.String(), secret) {
					t.Errorf("log holds %q:\n%s", secret, logs.String())
				}
			}
		})
	}
}
