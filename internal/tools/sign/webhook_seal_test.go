package sign_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestSignWebhookJobsSealed checks that a Sign event's delivery job holds
// no recipient's name or address in clear (issue 24 item 5: the job
// table's args are read raw), while the delivered payload still names them.
func TestSignWebhookJobsSealed(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		owner, _ := env.Team(t)
		hook := env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/sign"}).Want(t, 200)
		hookID := hook.Str("id")
		if hookID == "" {
			hookID = hook.Str("webhook.id")
		}
		name := "Recipient" + testenv.RandomHex(4)
		email := "secret-" + testenv.RandomHex(6) + "@example.com"
		doc := map[string]any{"name": "Lease", "recipients": []map[string]any{{"name": name, "email": email, "role": "signer"}}}
		d := signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200))
		id, recip := d["id"].(string), docIDs(d, "recipients")[0]
		env.Do(t, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil).Want(t, 200)
		link := env.Do(t, "GET", "/sign/v1/documents/"+id+"/recipients/"+recip+"/signing-link", owner.Token, nil).Want(t, 200).Str("url")
		// The recipient opens it: document.viewed names them.
		env.Do(t, "GET", "/sign/v1/public/sign?token="+strings.SplitN(link, "token=", 2)[1], "", nil).Want(t, 200)
		env.Webhooks.Wait()

		delivered := false
		for _, d := range rc.Events("document.viewed") {
			if bytes.Contains(d.Body, []byte(email)) && bytes.Contains(d.Body, []byte(name)) {
				delivered = true
			}
		}
		if !delivered {
			t.Errorf("no document.viewed delivery names the recipient %s <%s>", name, email)
		}
		rows, err := env.SQL.DB().QueryContext(context.Background(),
			`SELECT CAST(args AS TEXT) FROM river_job WHERE kind = 'webhook.delivery'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var args string
			if err := rows.Scan(&args); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(args, hookID) {
				continue // another test's
			}
			n++
			if strings.Contains(args, email) || strings.Contains(args, name) {
				t.Errorf("a webhook job's args hold the recipient in clear: %s", args)
			}
		}
		if n == 0 {
			t.Fatalf("no webhook.delivery job of webhook %s in the job table", hookID)
		}
	})
}
