package sign_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignExpiry checks the expiry sweep with the injectable clock: a
// pending document past its expiresAt becomes expired and fires
// document.expired once even when three sweeps run at once; drafts and
// documents without an expiry stay as they are; a past expiresAt is
// refused at creation.
func TestSignExpiry(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		owner, _ := env.Team(t)
		env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/sign"}).Want(t, 200)
		signers := []map[string]any{{"name": "Ada", "email": "ada@example.com"}}
		past := env.Clock.Now().Add(-time.Minute).Format(time.RFC3339)
		if r := env.CreateDocument(t, owner.Token, testenv.TestPDF, map[string]any{"name": "Old", "expiresAt": past, "recipients": signers}); r.Status != 400 {
			t.Errorf("expiresAt in the past: %d; want 400", r.Status)
		}
		at := env.Clock.Now().Add(5 * time.Minute).UTC()
		create := func(name string, expires bool) string {
			doc := map[string]any{"name": name, "recipients": signers}
			if expires {
				doc["expiresAt"] = at.Format(time.RFC3339)
			}
			return signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200))["id"].(string)
		}
		due, draft, open := create("Due", true), create("Draft", true), create("Open", false)
		for _, id := range []string{due, open} {
			env.Do(t, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil).Want(t, 200)
		}
		svc := env.Sign
		if n, err := svc.ExpireDue(context.Background()); err != nil || n != 0 {
			t.Fatalf("sweep before expiry = %d, %v; want 0", n, err)
		}
		env.Clock.Advance(5 * time.Minute)
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := svc.ExpireDue(context.Background())
				if err != nil {
					t.Errorf("sweep: %v", err)
				}
				mu.Lock()
				total += n
				mu.Unlock()
			}()
		}
		wg.Wait()
		if total != 1 {
			t.Errorf("three sweeps expired %d documents; want 1", total)
		}
		for id, want := range map[string]string{due: "expired", draft: "draft", open: "pending"} {
			if got := env.Do(t, "GET", "/sign/v1/documents/"+id, owner.Token, nil).Want(t, 200).Str("document.status"); got != want {
				t.Errorf("document %s status = %q; want %q", id, got, want)
			}
		}
		env.Webhooks.Wait()
		got := rc.Events("document.expired")
		if len(got) != 1 {
			t.Fatalf("document.expired delivered %d times; want 1", len(got))
		}
		var p map[string]any
		json.Unmarshal(got[0].Body, &p)
		doc, _ := p["document"].(map[string]any)
		if p["event"] != "document.expired" || p["documentId"] != due || p["occurredAt"] == nil || doc["status"] != "expired" || p["recipient"] != nil {
			t.Errorf("document.expired payload = %s", got[0].Body)
		}
	})
}
