package sign_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/token"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
)

// freshToken returns a function minting tok's claims again at the env's
// clock, for tests that move the clock by hours.
func freshToken(t *testing.T, env *testenv.Env, tok string) func() string {
	var claims token.Claims
	raw, _ := json.Marshal(testenv.Claims(t, tok))
	json.Unmarshal(raw, &claims)
	return func() string { return env.ForgeToken(t, tok, claims) }
}

// sent is a document made and sent by sendDoc: its id, its signers'
// addresses and the send's answer.
type sent struct {
	id   string
	to   []string
	resp *testenv.Resp
}

// sendDoc creates a draft with n signers at fresh addresses (and a cc,
// who gets no mail, when there is room) as tok, with autoRemindDays days, and posts its send.
func sendDoc(t *testing.T, env *testenv.Env, tok string, n, days int) sent {
	t.Helper()
	var s sent
	var rs []map[string]any
	if n < sign.MaxRecipients {
		rs = append(rs, map[string]any{"name": "Copy", "email": testenv.Email(), "role": "cc"})
	}
	for range n {
		s.to = append(s.to, testenv.Email())
		rs = append(rs, map[string]any{"name": "Signer", "email": s.to[len(s.to)-1]})
	}
	doc := map[string]any{"name": "Invoice", "message": "Pay here", "recipients": rs, "autoRemindDays": days}
	s.id = signDoc(t, env.CreateDocument(t, tok, testenv.TestPDF, doc).Want(t, 200))["id"].(string)
	s.resp = env.Do(t, "POST", "/sign/v1/documents/"+s.id+"/send", tok, nil)
	return s
}

// wantRefused checks that s was refused with 429, Retry-After retry and
// an error naming what, and that the document stayed a draft and its
// signers got no mail.
func wantRefused(t *testing.T, env *testenv.Env, tok string, s sent, retry time.Duration, what string) {
	t.Helper()
	s.resp.Want(t, 429)
	if got, want := s.resp.Header.Get("Retry-After"), strconv.Itoa(int(retry.Seconds())); got != want {
		t.Errorf("Retry-After = %q; want %s", got, want)
	}
	if msg := s.resp.Str("error"); !strings.Contains(msg, what) {
		t.Errorf("429 error %q; want it to name %q", msg, what)
	}
	if st := env.Do(t, "GET", "/sign/v1/documents/"+s.id, tok, nil).Want(t, 200).Str("document.status"); st != sign.Draft {
		t.Errorf("refused document is %s; want draft", st)
	}
	for _, to := range s.to {
		if n := env.MailsTo(t, to); n != 0 {
			t.Errorf("%d mails to a signer of a refused send; want 0", n)
		}
	}
}

// TestSignMailLimitUnverified checks the phishing flood from an account
// that never confirmed its address: it sends MailsPerUnverified signing
// requests a rolling day, the send past that is refused whole (429 with
// Retry-After, nothing mailed, the document a draft), and the day rolls.
func TestSignMailLimitUnverified(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		tok := freshToken(t, env, owner.Token)
		sendDoc(t, env, tok(), 4, 0).resp.Want(t, 200)
		env.Clock.Advance(time.Hour)
		sendDoc(t, env, tok(), sign.MailsPerUnverified-4-2, 0).resp.Want(t, 200)
		// 3 more would make 11: the first 4 must leave the day first, in 23 h.
		wantRefused(t, env, tok(), sendDoc(t, env, tok(), 3, 0), 23*time.Hour, "until its email address is verified")
		sendDoc(t, env, tok(), 2, 0).resp.Want(t, 200)
		wantRefused(t, env, tok(), sendDoc(t, env, tok(), 1, 0), 23*time.Hour, "until its email address is verified")
		// A day after the first send its 4 mails leave the window.
		env.Clock.Advance(23 * time.Hour)
		sendDoc(t, env, tok(), 4, 0).resp.Want(t, 200)
		wantRefused(t, env, tok(), sendDoc(t, env, tok(), 1, 0), time.Hour, "until its email address is verified")
		// More than a day's worth in one document waits a whole day.
		wantRefused(t, env, tok(), sendDoc(t, env, tok(), sign.MailsPerUnverified+1, 0), 24*time.Hour, "until its email address is verified")
	})
}

// TestSignMailLimitVerified checks that a confirmed account sends up to
// MailsPerAccount signing requests a day, counted across its workspaces.
func TestSignMailLimitVerified(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		env.VerifyEmail(t, owner)
		for range sign.MailsPerAccount / sign.MaxRecipients {
			sendDoc(t, env, owner.Token, sign.MaxRecipients, 0).resp.Want(t, 200)
		}
		wantRefused(t, env, owner.Token, sendDoc(t, env, owner.Token, 1, 0), 24*time.Hour, "an account may send at most 200")
		// Its personal workspace has room, the account none.
		personal := env.Do(t, "POST", "/v1/auth/switch-org", owner.Token, map[string]string{"org_id": owner.OrgID}).Want(t, 200).Str("access_token")
		wantRefused(t, env, personal, sendDoc(t, env, personal, 1, 0), 24*time.Hour, "an account may send at most 200")
	})
}

// TestSignMailLimitConcurrent checks that sends at once at the edge of
// the limit never overshoot it: of 20 one-signer documents sent together
// by an unconfirmed account through two instances, exactly
// MailsPerUnverified go out.
func TestSignMailLimitConcurrent(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		var docs []sent
		for range 2 * sign.MailsPerUnverified {
			to := testenv.Email()
			doc := map[string]any{"name": "Invoice", "recipients": []map[string]any{{"name": "Signer", "email": to}}}
			docs = append(docs, sent{id: signDoc(t, env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200))["id"].(string), to: []string{to}})
		}
		// Half go to a second instance on the same database.
		instances := []*testenv.Env{env, env.Another(t)}
		answers := testenv.AtOnceAnswers(len(docs), func(i int) *testenv.Resp {
			return instances[i%2].Do(t, "POST", "/sign/v1/documents/"+docs[i].id+"/send", owner.Token, nil)
		})
		ok, mailed := 0, 0
		for i, r := range answers {
			switch r.Status {
			case 200:
				ok++
			case 429:
				if st := env.Do(t, "GET", "/sign/v1/documents/"+docs[i].id, owner.Token, nil).Want(t, 200).Str("document.status"); st != sign.Draft {
					t.Errorf("refused document is %s; want draft", st)
				}
			default:
				t.Errorf("concurrent send answered %d %s; want 200 or 429", r.Status, r.Body)
			}
			mailed += env.MailsTo(t, docs[i].to[0])
		}
		if ok != sign.MailsPerUnverified || mailed != sign.MailsPerUnverified {
			t.Errorf("20 sends at once: %d sent, %d mailed; want %d and %d", ok, mailed, sign.MailsPerUnverified, sign.MailsPerUnverified)
		}
	})
}

// TestSignMailLimitWorkspace checks the workspace's limit: the sum of its
// members' signing requests and reminders, each member under their own
// limit; a reminder round it has no room for is postponed (and audited)
// until it has, never lost, and counts once sent.
func TestSignMailLimitWorkspace(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		a, org := env.Team(t)
		env.VerifyEmail(t, a)
		b, c := env.Join(t, a, org, "member"), env.Join(t, a, org, "member")
		for _, m := range []*testenv.Account{b, c} {
			tok := env.MailToken(t, m.Email, testenv.VerifyLink)
			env.Do(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": tok}).Want(t, 200)
		}
		ta, tb, tc := freshToken(t, env, a.Token), freshToken(t, env, b.Token), freshToken(t, env, c.Token)
		t0 := env.Clock.Now()
		reminded := sendDoc(t, env, ta(), 2, 1) // reminders daily
		reminded.resp.Want(t, 200)
		env.Clock.Advance(time.Hour)
		for _, n := range []int{50, 50, 50, 48} { // a: 200
			sendDoc(t, env, ta(), n, 0).resp.Want(t, 200)
		}
		for range 4 { // b: 200
			sendDoc(t, env, tb(), 50, 0).resp.Want(t, 200)
		}
		sendDoc(t, env, tc(), 50, 0).resp.Want(t, 200)
		sendDoc(t, env, tc(), 48, 0).resp.Want(t, 200) // the workspace: 498
		// c has room of its own, the workspace only for 2 until the
		// first send leaves the day, 23 h from now.
		wantRefused(t, env, tc(), sendDoc(t, env, tc(), 3, 0), 23*time.Hour, "a workspace may send at most 500")
		sendDoc(t, env, tc(), 2, 0).resp.Want(t, 200)

		// A day after the first send its reminder round is due, but c has
		// filled the room its requests left: the round waits an hour (the
		// mails of t0+1h leave the day then), is audited, and sends nothing.
		env.Clock.Advance(23 * time.Hour)
		sendDoc(t, env, tc(), 2, 0).resp.Want(t, 200)
		// (The sweeps see every test's documents: the database is shared,
		// so the mails, not their counts, tell what happened.)
		if _, err := env.Sign.RemindDue(ctx); err != nil {
			t.Fatalf("reminder sweep on a full workspace: %v; want no error", err)
		}
		postponed, err := env.Store.AuditLog(ctx, org, sign.Tool, "sign.document.reminder_postponed", 10)
		if err != nil || len(postponed) != 1 || postponed[0].TargetID != reminded.id || !strings.Contains(postponed[0].Meta, `"retry_after_seconds":3600`) {
			t.Errorf("postponed audit = %+v, %v; want one entry for the document, retry in 3600 s", postponed, err)
		}
		env.Clock.Advance(30 * time.Minute)
		if _, err := env.Sign.RemindDue(ctx); err != nil {
			t.Errorf("sweep before the postponed time: %v", err)
		}
		for _, to := range reminded.to {
			if n := env.MailsTo(t, to); n != 1 {
				t.Errorf("%d mails to a signer of the postponed round; want 1 (the request)", n)
			}
		}
		env.Clock.Advance(30 * time.Minute)
		if _, err := env.Sign.RemindDue(ctx); err != nil {
			t.Errorf("sweep once the workspace has room: %v", err)
		}
		for _, to := range reminded.to {
			if n := env.MailsTo(t, to); n != 2 {
				t.Errorf("%d mails to a signer after the round; want 2 (the request, the reminder)", n)
			}
		}
		// The reminder counts for the workspace and for its owner.
		var orgN, ownerN int
		since := t0.Add(24*time.Hour + time.Hour).UnixMicro()
		env.Store.DB().QueryRow(`SELECT COUNT(*) FROM mail_sent WHERE kind = 'sign' AND org_id = $1 AND sent_at > $2`, org, since-1).Scan(&orgN)
		env.Store.DB().QueryRow(`SELECT COUNT(*) FROM mail_sent WHERE kind = 'sign' AND sender_id = $1 AND sent_at > $2`, a.UserID, since-1).Scan(&ownerN)
		if orgN != 2 || ownerN != 2 {
			t.Errorf("mail counted at the reminder: workspace %d, owner %d; want 2, 2", orgN, ownerN)
		}
		env.Do(t, "POST", "/sign/v1/documents/"+reminded.id+"/void", ta(), map[string]any{}).Want(t, 200)
	})
}

// TestSignReminderRounds checks the reminder amplification: a document's
// automatic reminders stop after MaxReminderRounds rounds however long it
// stays pending.
func TestSignReminderRounds(t *testing.T) {
	testenv.RunWith(t, testenv.Options{MailLimits: true}, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		env.VerifyEmail(t, owner)
		s := sendDoc(t, env, owner.Token, 1, 1)
		s.resp.Want(t, 200)
		tok := freshToken(t, env, owner.Token)
		for range sign.MaxReminderRounds + 3 {
			env.Clock.Advance(24 * time.Hour)
			if _, err := env.Sign.RemindDue(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if n := env.MailsTo(t, s.to[0]); n != 1+sign.MaxReminderRounds {
			t.Errorf("%d mails to the signer in %d days; want %d (the request and %d rounds)", n, sign.MaxReminderRounds+3, 1+sign.MaxReminderRounds, sign.MaxReminderRounds)
		}
		env.Do(t, "POST", "/sign/v1/documents/"+s.id+"/void", tok(), map[string]any{}).Want(t, 200)
	})
}
