package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// TestJobsCommand inserts two deliveries through the store in one
// transaction and lists them with `gatehouse jobs`, on both databases.
func TestJobsCommand(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		url := "sqlite:" + filepath.Join(t.TempDir(), "g.db")
		db, err := sqlstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		checkJobsCommand(t, db, url)
	})
	t.Run("postgres", func(t *testing.T) {
		db := testenv.Postgres(t)
		checkJobsCommand(t, db, db.URL())
	})
}

func checkJobsCommand(t *testing.T, db *sqlstore.DB, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const secretBody = `{"secret":"do-not-print-me"}`
	ws := db.Webhooks()
	err := ws.Tx(ctx, func(tx webhooks.Store) error {
		return tx.EnqueueDeliveries(ctx, []*webhooks.Delivery{
			{ID: "d1", WebhookID: "w1", OrgID: "o1", Tool: "links", Event: "link.created", Body: secretBody, Tries: 3},
			{ID: "d2", WebhookID: "w1", OrgID: "o1", Tool: "links", Event: "link.created", Body: secretBody, Tries: 3},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GATEHOUSE_DATABASE_URL": url}
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"jobs", "-state", "available", "-kind", webhooks.DeliveryKind, "-limit", "5"}, testGetenv(env), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("gatehouse jobs: exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	if n := strings.Count(out, webhooks.DeliveryKind+"  available  0/3"); n < 2 {
		t.Errorf("gatehouse jobs listed %d available deliveries at 0/3; want at least 2:\n%s", n, out)
	}
	if !strings.Contains(out, "KIND") || !strings.Contains(out, "JOBS") {
		t.Errorf("gatehouse jobs printed no summary:\n%s", out)
	}
	if strings.Contains(out, "do-not-print-me") || strings.Contains(out, "link.created") {
		t.Errorf("gatehouse jobs printed a job's args:\n%s", out)
	}
	stdout.Reset()
	if code := run(ctx, []string{"jobs", "-state", "discarded", "-kind", webhooks.DeliveryKind}, testGetenv(env), &stdout, &stderr); code != 0 {
		t.Fatalf("gatehouse jobs -state discarded: exit %d, stderr %q", code, stderr.String())
	}
	if strings.Contains(stdout.String(), "0/3") {
		t.Errorf("gatehouse jobs -state discarded listed an available job:\n%s", stdout.String())
	}
	for _, bad := range [][]string{{"jobs", "-state", "lost"}, {"jobs", "-limit", "0"}} {
		if code := run(ctx, bad, testGetenv(env), &stdout, &stderr); code != 2 {
			t.Errorf("gatehouse %v: exit %d; want 2", bad, code)
		}
	}
}
