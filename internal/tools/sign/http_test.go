package sign_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

func signDoc(t *testing.T, r *testenv.Resp) map[string]any {
	t.Helper()
	return r.Obj(t, "document")
}

// ids returns the ids of a document's recipients and fields, in order.
func docIDs(d map[string]any, key string) []string {
	var out []string
	for _, x := range d[key].([]any) {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

// TestSignDocuments walks the Sign API of TOOLS.md and spec 4.6: create,
// send, view, sign, field removal rules, owner-only signing links with
// their audit entry, decline, void, duplicate, and the flat events.
func TestSignDocuments(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset()
		owner, org := env.Team(t)
		admin := env.Join(t, owner, org, "admin")
		stranger, _ := env.Team(t)
		env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": rc.URL + "/sign"}).Want(t, 200)

		doc := map[string]any{"name": "Lease", "message": "Please sign",
			"recipients": []map[string]any{{"name": "Ada", "email": "ada@example.com", "role": "signer"},
				{"name": "Bob", "email": "bob@example.com", "role": "signer"}, {"name": "Cy", "email": "cy@example.com", "role": "cc"}},
			"fields": []map[string]any{{"type": "signature", "page": 1, "x": 10, "y": 20, "width": 100, "height": 30, "recipientIndex": 0},
				{"type": "signature", "page": 2, "x": 10, "y": 20, "width": 100, "height": 30, "recipientIndex": 1},
				{"type": "text", "page": 2, "x": 10, "y": 80, "width": 100, "height": 30, "recipientIndex": 1, "required": false}}}
		if r := env.CreateDocument(t, "", testenv.TestPDF, doc); r.Status != 401 {
			t.Errorf("no token: %d; want 401", r.Status)
		}
		if r := env.CreateDocument(t, owner.Token, []byte("not a pdf"), doc); r.Status != 400 {
			t.Errorf("not a PDF: %d; want 400", r.Status)
		}
		bad := map[string]any{"name": "Bad", "recipients": doc["recipients"], "fields": []map[string]any{{"type": "signature", "page": 3, "x": 1, "y": 1, "width": 1, "height": 1}}}
		if r := env.CreateDocument(t, owner.Token, testenv.TestPDF, bad); r.Status != 400 {
			t.Errorf("field on page 3 of 2: %d; want 400", r.Status)
		}
		for _, odd := range []map[string]any{{"name": "a\u0000b"}, {"name": "ok", "recipients": []map[string]any{{"name": "R", "email": "r@example.com", "orderIndex": 3000000000}}}} {
			if r := env.CreateDocument(t, owner.Token, testenv.TestPDF, odd); r.Status != 400 {
				t.Errorf("document %v: %d; want 400", odd, r.Status)
			}
		}
		r := env.CreateDocument(t, owner.Token, testenv.TestPDF, doc)
		if r.Status != 200 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		d := signDoc(t, r)
		id := d["id"].(string)
		testenv.CheckKeys(t, "document", d, "id", "name", "url", "status", "signingMode", "message", "visibility", "ownerId", "templateId",
			"voidReason", "notaryState", "created", "modified", "sentAt", "completedAt", "voidedAt", "declinedAt", "expiresAt",
			"lastRemindedAt", "scheduledPurgeAt", "purgedAt", "size", "pages", "autoRemindDays", "hasFile", "hasFinalFile", "legalHold",
			"requiresNotarization", "files", "recipients", "fields")
		if d["status"] != "draft" || d["pages"] != float64(2) || d["ownerId"] != owner.UserID || d["size"] != float64(len(testenv.TestPDF)) {
			t.Errorf("created document = %s", r.Body)
		}
		if strings.Contains(string(r.Body), "token=") {
			t.Errorf("the document payload carries a signing link: %s", r.Body)
		}
		recips, fields := docIDs(d, "recipients"), docIDs(d, "fields")

		file := env.Do(t, "GET", "/sign/v1/documents/"+id+"/file", owner.Token, nil).Want(t, 200)
		if !bytes.Equal(file.Body, testenv.TestPDF) || file.Header.Get("Content-Type") != "application/pdf" {
			t.Errorf("file = %d bytes (%s)", len(file.Body), file.Header.Get("Content-Type"))
		}
		env.Do(t, "GET", "/sign/v1/documents/"+id, stranger.Token, nil).Want(t, 404)
		env.Do(t, "DELETE", "/sign/v1/documents/"+id+"/fields/"+fields[2], owner.Token, nil).Want(t, 400) // draft

		// Signing links: the owner only, and each copy is audited.
		env.Do(t, "GET", "/sign/v1/documents/"+id+"/recipients/"+recips[0]+"/signing-link", admin.Token, nil).Want(t, 403)
		env.Do(t, "GET", "/sign/v1/documents/"+id+"/recipients/"+uuid.NewString()+"/signing-link", owner.Token, nil).Want(t, 404)
		linkA := env.Do(t, "GET", "/sign/v1/documents/"+id+"/recipients/"+recips[0]+"/signing-link", owner.Token, nil).Want(t, 200).Str("url")
		linkB := env.Do(t, "GET", "/sign/v1/documents/"+id+"/recipients/"+recips[1]+"/signing-link", owner.Token, nil).Want(t, 200).Str("url")
		if n := len(env.Audit(t, owner.Token, org, "action=sign.document.signing_link_copied")); n != 2 {
			t.Errorf("%d signing_link_copied entries; want 2", n)
		}
		tokenA, tokenB := strings.SplitN(linkA, "token=", 2)[1], strings.SplitN(linkB, "token=", 2)[1]
		env.Do(t, "GET", "/sign/v1/public/sign?token="+tokenA, "", nil).Want(t, 410) // not sent yet

		if s := env.Do(t, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil).Want(t, 200); s.Str("document.status") != "pending" || s.Get("document.sentAt") == nil {
			t.Errorf("sent = %s", s.Body)
		}
		env.Do(t, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil).Want(t, 400)
		view := env.Do(t, "GET", "/sign/v1/public/sign?token="+tokenA, "", nil).Want(t, 200)
		if view.Str("recipient.status") != "viewed" || len(view.Get("fields").([]any)) != 1 {
			t.Errorf("view = %s", view.Body)
		}
		env.Do(t, "GET", "/sign/v1/public/sign?token=nope", "", nil).Want(t, 404)
		env.Do(t, "POST", "/sign/v1/public/sign?token="+tokenA, "", map[string]any{"values": map[string]string{}}).Want(t, 400) // required field
		env.Do(t, "POST", "/sign/v1/public/sign?token="+tokenA, "", map[string]any{"values": map[string]string{fields[1]: "x"}}).Want(t, 400)
		if signed := env.Do(t, "POST", "/sign/v1/public/sign?token="+tokenA, "", map[string]any{"values": map[string]string{fields[0]: "Ada Lovelace"}}).Want(t, 200); !strings.Contains(string(signed.Body), `"value":"Ada Lovelace"`) {
			t.Errorf("sign answer = %s; want the filled value", signed.Body)
		}
		env.Do(t, "POST", "/sign/v1/public/sign?token="+tokenA, "", map[string]any{"values": map[string]string{fields[0]: "again"}}).Want(t, 409)

		// Field removal: 409 once its recipient signed; fine for one who has not.
		env.Do(t, "DELETE", "/sign/v1/documents/"+id+"/fields/"+fields[0], owner.Token, nil).Want(t, 409)
		after := env.Do(t, "DELETE", "/sign/v1/documents/"+id+"/fields/"+fields[2], owner.Token, nil).Want(t, 200)
		if n := len(signDoc(t, after)["fields"].([]any)); n != 2 {
			t.Errorf("%d fields after removing one; want 2", n)
		}
		env.Do(t, "DELETE", "/sign/v1/documents/"+id+"/fields/"+uuid.NewString(), owner.Token, nil).Want(t, 404)

		// Bob declines: the document is declined.
		dec := env.Do(t, "POST", "/sign/v1/public/decline?token="+tokenB, "", map[string]string{"reason": "wrong dates"}).Want(t, 200)
		if dec.Str("document.status") != "declined" {
			t.Errorf("decline = %s", dec.Body)
		}
		env.Do(t, "POST", "/sign/v1/public/sign?token="+tokenB, "", map[string]any{"values": map[string]string{fields[1]: "Bob"}}).Want(t, 410)

		// Duplicate: a fresh draft with the same file, recipients and placements.
		dup := signDoc(t, env.Do(t, "POST", "/sign/v1/documents/"+id+"/duplicate", admin.Token, map[string]any{}).Want(t, 200))
		dupID := dup["id"].(string)
		if dupID == id || dup["status"] != "draft" || dup["ownerId"] != admin.UserID || dup["name"] != "Lease" || len(dup["recipients"].([]any)) != 3 || len(dup["fields"].([]any)) != 2 {
			t.Errorf("duplicate = %v", dup)
		}
		for _, x := range dup["recipients"].([]any) {
			if rec := x.(map[string]any); rec["status"] != "pending" || rec["signedAt"] != nil || rec["viewedAt"] != nil {
				t.Errorf("duplicated recipient = %v; want a fresh one", rec)
			}
		}
		for _, x := range dup["fields"].([]any) {
			if x.(map[string]any)["value"] != nil {
				t.Errorf("duplicated field kept its value: %v", x)
			}
		}
		if f := env.Do(t, "GET", "/sign/v1/documents/"+dupID+"/file", owner.Token, nil).Want(t, 200); !bytes.Equal(f.Body, testenv.TestPDF) {
			t.Errorf("duplicate's file differs")
		}
		if src := signDoc(t, env.Do(t, "GET", "/sign/v1/documents/"+id, owner.Token, nil).Want(t, 200)); src["status"] != "declined" {
			t.Errorf("source changed by the duplicate: %v", src["status"])
		}

		// The duplicate goes all the way: both sign, it completes.
		dupRecips, dupFields := docIDs(dup, "recipients"), docIDs(dup, "fields")
		env.Do(t, "POST", "/sign/v1/documents/"+dupID+"/send", admin.Token, nil).Want(t, 200)
		for k := range 2 {
			link := env.Do(t, "GET", "/sign/v1/documents/"+dupID+"/recipients/"+dupRecips[k]+"/signing-link", admin.Token, nil).Want(t, 200).Str("url")
			tok := strings.SplitN(link, "token=", 2)[1]
			env.Do(t, "POST", "/sign/v1/public/sign?token="+tok, "", map[string]any{"values": map[string]string{dupFields[k]: "signed"}}).Want(t, 200)
		}
		done := signDoc(t, env.Do(t, "GET", "/sign/v1/documents/"+dupID, owner.Token, nil).Want(t, 200))
		if done["status"] != "completed" || done["completedAt"] == nil {
			t.Errorf("completed = %v", done)
		}
		env.Do(t, "POST", "/sign/v1/documents/"+dupID+"/void", owner.Token, map[string]string{"reason": "x"}).Want(t, 409)

		// Void a draft.
		third := signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, map[string]any{"name": "Draft"}))
		v := env.Do(t, "POST", "/sign/v1/documents/"+third["id"].(string)+"/void", owner.Token, map[string]string{"reason": "not needed"}).Want(t, 200)
		if v.Str("document.status") != "voided" || v.Str("document.voidReason") != "not needed" {
			t.Errorf("void = %s", v.Body)
		}

		env.Webhooks.Wait()
		for _, e := range []string{"document.sent", "document.viewed", "document.signed", "document.declined", "document.completed", "document.voided"} {
			got := rc.Events(e)
			if len(got) == 0 {
				t.Errorf("no %s event", e)
				continue
			}
			var p map[string]any
			json.Unmarshal(got[0].Body, &p)
			if p["event"] != e || p["documentId"] == nil || p["occurredAt"] == nil || p["document"] == nil || p["data"] != nil {
				t.Errorf("%s payload = %s; want the flat Sign payload", e, got[0].Body)
			}
			_, hasRecipient := p["recipient"]
			if want := e == "document.viewed" || e == "document.signed" || e == "document.declined"; hasRecipient != want {
				t.Errorf("%s payload recipient present = %v; want %v", e, hasRecipient, want)
			}
		}
	})
}
