package sign_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
)

// signLink is the prefix of the signing links of New's service.
func signLink(env *testenv.Env) string { return env.URL + "/sign/v1/public/sign?token=" }

// TestSignRequestMail checks that sending a document mails each signer a
// signing request whose link opens the document as that signer, and
// mails nothing to cc recipients or before the document is sent.
func TestSignRequestMail(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		ada, bob, cy := testenv.Email(), testenv.Email(), testenv.Email()
		doc := map[string]any{"name": "Lease\r\nBcc: x@example.com", "message": "Please sign by Friday",
			"recipients": []map[string]any{{"name": "Ada", "email": ada}, {"name": "Bob", "email": bob}, {"name": "Cy", "email": cy, "role": "cc"}}}
		id := signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200))["id"].(string)
		if n := env.MailsTo(t, ada); n != 0 {
			t.Fatalf("%d mails to a signer of a draft; want 0", n)
		}
		env.Do(t, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil).Want(t, 200)
		for name, to := range map[string]string{"Ada": ada, "Bob": bob} {
			m := env.Mail.WaitFor(t, to, 5*time.Second)
			if m.Subject != "Please sign: Lease Bcc: x@example.com" || !strings.Contains(m.Text, "Please sign by Friday") {
				t.Errorf("request to %s: subject %q, text %q", name, m.Subject, m.Text)
			}
			tok := testenv.TokenFromLink(t, m.Text, signLink(env))
			r := env.Do(t, "GET", "/sign/v1/public/sign?token="+tok, "", nil).Want(t, 200)
			if got := r.Str("recipient.name"); got != name {
				t.Errorf("the link mailed to %s opens the document as %q", name, got)
			}
		}
		if n := env.MailsTo(t, cy); n != 0 {
			t.Errorf("%d mails to the cc recipient; want 0", n)
		}
		if n := env.MailsTo(t, ada); n != 1 {
			t.Errorf("%d mails to Ada; want 1", n)
		}
	})
}

// TestSignReminders checks autoRemindDays with the injectable clock: a
// round at N days after sending, not before and not twice (three sweeps at
// once send one), to signers who have not signed, again N days later, and
// none once the document is voided, expired or completed.
func TestSignReminders(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		ctx := context.Background()
		// fresh is the owner's token, minted at the clock's time: the clock
		// moves days ahead.
		var claims token.Claims
		raw, _ := json.Marshal(testenv.Claims(t, owner.Token))
		json.Unmarshal(raw, &claims)
		fresh := func() string { return env.ForgeToken(t, owner.Token, claims) }
		for _, days := range []any{-1, 366, "2", 1.5} {
			bad := map[string]any{"name": "Bad", "autoRemindDays": days, "recipients": []map[string]any{{"name": "A", "email": testenv.Email()}}}
			if r := env.CreateDocument(t, fresh(), testenv.TestPDF, bad); r.Status != 400 {
				t.Errorf("autoRemindDays %v: %d; want 400", days, r.Status)
			}
		}
		ada, bob := testenv.Email(), testenv.Email()
		create := func(days int, extra map[string]any, to ...string) string {
			var rs []map[string]any
			for _, e := range to {
				rs = append(rs, map[string]any{"name": "R", "email": e})
			}
			doc := map[string]any{"name": "Lease", "autoRemindDays": days, "recipients": rs}
			for k, v := range extra {
				doc[k] = v
			}
			d := signDoc(t, env.CreateDocument(t, fresh(), testenv.TestPDF, doc).Want(t, 200))
			if d["autoRemindDays"] != float64(days) || d["lastRemindedAt"] != nil {
				t.Errorf("created autoRemindDays = %v, lastRemindedAt = %v; want %d, null", d["autoRemindDays"], d["lastRemindedAt"], days)
			}
			env.Do(t, "POST", "/sign/v1/documents/"+d["id"].(string)+"/send", fresh(), nil).Want(t, 200)
			return d["id"].(string)
		}
		id := create(2, nil, ada, bob)
		sweep := func(want int) {
			t.Helper()
			var total atomic.Int32
			testenv.AtOnce(3, func(int) {
				n, err := env.Sign.RemindDue(ctx)
				if err != nil {
					t.Errorf("reminder sweep: %v", err)
				}
				total.Add(int32(n))
			})
			if got := int(total.Load()); got != want {
				t.Errorf("three sweeps at %s reminded %d documents; want %d", env.Clock.Now(), got, want)
			}
		}
		env.Clock.Advance(48*time.Hour - time.Minute)
		sweep(0)
		adaTok := testenv.TokenFromLink(t, env.Mail.WaitFor(t, ada, 5*time.Second).Text, signLink(env))
		env.Do(t, "POST", "/sign/v1/public/sign?token="+adaTok, "", map[string]any{"values": map[string]string{}}).Want(t, 200)
		env.Clock.Advance(time.Minute)
		sweep(1)
		d := env.Do(t, "GET", "/sign/v1/documents/"+id, fresh(), nil).Want(t, 200)
		if got, want := d.Str("document.lastRemindedAt"), env.Clock.Now().Format(time.RFC3339); !strings.HasPrefix(got, strings.TrimSuffix(want, "Z")) {
			t.Errorf("lastRemindedAt = %q; want %s", got, want)
		}
		if a, b := env.MailsTo(t, ada), env.MailsTo(t, bob); a != 1 || b != 2 {
			t.Errorf("mails: signed Ada %d, unsigned Bob %d; want 1 (the request), 2 (request and reminder)", a, b)
		}
		if texts := env.MailTexts(bob, signLink(env)); len(texts) < 2 || !strings.Contains(texts[1], "reminder") {
			t.Errorf("Bob's mails %q; want the request, then a reminder", texts)
		}
		sweep(0)
		dup := signDoc(t, env.Do(t, "POST", "/sign/v1/documents/"+id+"/duplicate", fresh(), map[string]any{}).Want(t, 200))
		if dup["autoRemindDays"] != float64(2) || dup["lastRemindedAt"] != nil {
			t.Errorf("duplicate: autoRemindDays %v, lastRemindedAt %v; want 2 (kept), null", dup["autoRemindDays"], dup["lastRemindedAt"])
		}
		env.Clock.Advance(48 * time.Hour)
		sweep(1) // the duplicate is a draft: not reminded
		env.Do(t, "POST", "/sign/v1/documents/"+id+"/void", fresh(), map[string]any{"reason": "no"}).Want(t, 200)
		expiring := create(1, map[string]any{"expiresAt": env.Clock.Now().Add(time.Hour).Format(time.RFC3339)}, testenv.Email())
		carol := testenv.Email()
		done := create(1, nil, carol)
		carolTok := testenv.TokenFromLink(t, env.Mail.WaitFor(t, carol, 5*time.Second).Text, signLink(env))
		env.Do(t, "POST", "/sign/v1/public/sign?token="+carolTok, "", map[string]any{"values": map[string]string{}}).Want(t, 200)
		env.Clock.Advance(48 * time.Hour)
		if n, err := env.Sign.ExpireDue(ctx); n != 1 || err != nil {
			t.Fatalf("expiry sweep = %d, %v; want 1", n, err)
		}
		sweep(0)
		for id, want := range map[string]string{id: "voided", expiring: "expired", done: "completed"} {
			if got := env.Do(t, "GET", "/sign/v1/documents/"+id, fresh(), nil).Want(t, 200).Str("document.status"); got != want {
				t.Errorf("document status = %q; want %q", got, want)
			}
		}
		if b := env.MailsTo(t, bob); b != 3 {
			t.Errorf("%d mails to Bob after the void; want 3", b)
		}
	})
}
