package sign_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignPurge checks retention with the injectable clock: an ended
// document is purged at its end plus the retention, not a second before,
// once even when three sweeps run at once; the tombstone stays listed
// without its file (410), signing data or signing links; a legal hold,
// settable by the owner only, keeps a due document until it is cleared.
// The retention is 30 minutes so the access tokens outlive it, and this
// test's documents end 10 minutes after the earlier tests' (on PostgreSQL
// they share the tables), which the sweep a second early purges.
func TestSignPurge(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		const retention = 30 * time.Minute
		env.Sign.SetRetention(retention)
		t.Cleanup(func() { env.Sign.SetRetention(0) })
		owner, org := env.Team(t)
		admin := env.Join(t, owner, org, "admin")
		env.Clock.Advance(10 * time.Minute)
		docs := "/sign/v1/documents/"
		create := func(name string) map[string]any {
			doc := map[string]any{"name": name, "recipients": []map[string]any{{"name": "Ada", "email": "ada@example.com"}},
				"fields": []map[string]any{{"type": "signature", "page": 1, "x": 1, "y": 1, "width": 10, "height": 5, "recipientIndex": 0}}}
			return signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200))
		}
		signed, voided, held, draft := create("Signed"), create("Voided"), create("Held"), create("Draft")
		for _, d := range []map[string]any{signed, held} {
			env.Do(t, "POST", docs+d["id"].(string)+"/send", owner.Token, nil).Want(t, 200)
		}
		link := env.Do(t, "GET", docs+signed["id"].(string)+"/recipients/"+docIDs(signed, "recipients")[0]+"/signing-link", owner.Token, nil).Want(t, 200).Str("url")
		token := link[strings.Index(link, "token=")+len("token="):]
		env.Do(t, "POST", "/sign/v1/public/sign?token="+token, "", map[string]any{"values": map[string]string{docIDs(signed, "fields")[0]: "Ada"}}).Want(t, 200)
		env.Do(t, "POST", docs+voided["id"].(string)+"/void", owner.Token, map[string]any{"reason": "no"}).Want(t, 200)
		env.Do(t, "POST", docs+held["id"].(string)+"/void", owner.Token, map[string]any{}).Want(t, 200)
		ended := env.Clock.Now()

		got := env.Do(t, "GET", docs+signed["id"].(string), owner.Token, nil).Want(t, 200)
		if at, want := got.Str("document.scheduledPurgeAt"), ended.Add(retention).Format(time.RFC3339); at != want || got.Str("document.status") != "completed" {
			t.Errorf("scheduledPurgeAt = %q (status %s); want %q", at, got.Str("document.status"), want)
		}
		if got := env.Do(t, "GET", docs+draft["id"].(string), owner.Token, nil).Want(t, 200).Get("document.scheduledPurgeAt"); got != nil {
			t.Errorf("a draft's scheduledPurgeAt = %v; want null", got)
		}

		hold := docs + held["id"].(string)
		env.Do(t, "PATCH", hold, admin.Token, map[string]any{"legalHold": true}).Want(t, 403)
		env.Do(t, "PATCH", hold, owner.Token, map[string]any{}).Want(t, 400)
		env.Do(t, "PATCH", hold, owner.Token, map[string]any{"legalHold": "yes"}).Want(t, 400)
		env.Do(t, "PATCH", docs+"nope", owner.Token, map[string]any{"legalHold": true}).Want(t, 404)
		h := env.Do(t, "PATCH", hold, owner.Token, map[string]any{"legalHold": true}).Want(t, 200)
		if h.Get("document.legalHold") != true || h.Get("document.scheduledPurgeAt") != nil {
			t.Errorf("held document = %s; want legalHold true, no scheduledPurgeAt", h.Body)
		}

		env.Clock.Advance(retention - time.Second)
		if _, err := env.Sign.PurgeDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, d := range []map[string]any{signed, voided} {
			if env.Do(t, "GET", docs+d["id"].(string), owner.Token, nil).Want(t, 200).Get("document.hasFile") != true {
				t.Errorf("document %s purged a second before its retention", d["name"])
			}
		}
		env.Clock.Advance(time.Second)
		var total atomic.Int64
		testenv.AtOnce(3, func(int) {
			n, err := env.Sign.PurgeDue(context.Background())
			if err != nil {
				t.Errorf("sweep: %v", err)
			}
			total.Add(int64(n))
		})
		if total.Load() != 2 {
			t.Errorf("three sweeps purged %d documents; want 2 (signed and voided)", total.Load())
		}
		if es, err := env.Store.AuditLog(context.Background(), org, "sign", "sign.document.purged", 10); err != nil || len(es) != 2 || es[0].ActorID != "" {
			t.Errorf("sign.document.purged entries = %v, %v; want 2 without an actor", es, err)
		}

		id := signed["id"].(string)
		p := env.Do(t, "GET", docs+id, owner.Token, nil).Want(t, 200)
		if p.Str("document.status") != "completed" || p.Get("document.hasFile") != false || p.Get("document.purgedAt") == nil ||
			p.Get("document.scheduledPurgeAt") != nil || strings.Contains(string(p.Body), `"value":"Ada"`) || strings.Contains(string(p.Body), `"signature":"Ada"`) {
			t.Errorf("purged document = %s", p.Body)
		}
		env.Do(t, "GET", docs+id+"/file", owner.Token, nil).Want(t, 410)
		env.Do(t, "GET", docs+id+"/recipients/"+docIDs(signed, "recipients")[0]+"/signing-link", owner.Token, nil).Want(t, 410)
		env.Do(t, "POST", docs+id+"/duplicate", owner.Token, map[string]any{}).Want(t, 410)
		env.Do(t, "PATCH", docs+id, owner.Token, map[string]any{"legalHold": true}).Want(t, 410)
		env.Do(t, "GET", "/sign/v1/public/sign?token="+token, "", nil).Want(t, 404)
		if n := len(env.Do(t, "GET", "/sign/v1/documents", owner.Token, nil).Want(t, 200).Get("documents").([]any)); n != 4 {
			t.Errorf("listed %d documents after the purge; want the 4 (tombstones stay)", n)
		}
		env.Do(t, "GET", docs+draft["id"].(string)+"/file", owner.Token, nil).Want(t, 200)
		env.Do(t, "GET", hold+"/file", owner.Token, nil).Want(t, 200)

		// Cleared, the hold no longer keeps the due document.
		env.Do(t, "PATCH", hold, owner.Token, map[string]any{"legalHold": false}).Want(t, 200)
		if n, err := env.Sign.PurgeDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("sweep after the hold is cleared = %d, %v; want 1", n, err)
		}
		env.Do(t, "GET", hold+"/file", owner.Token, nil).Want(t, 410)
		if n, err := env.Sign.PurgeDue(context.Background()); err != nil || n != 0 {
			t.Errorf("sweep again = %d, %v; want 0", n, err)
		}
	})
}
