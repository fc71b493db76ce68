package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/app"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/sqlstore"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// mailArgs returns the raw arguments of every mail job of env's queue,
// whatever its state.
func mailArgs(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	rows, err := env.Store.DB().QueryContext(context.Background(),
		`SELECT CAST(args AS TEXT) FROM river_job WHERE kind = 'mail' AND queue = '`+env.Jobs.MailQueue()+`'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// logLines returns the lines of env's log that contain every one of subs.
func logLines(env *testenv.Env, subs ...string) []string {
	var out []string
	for _, l := range strings.Split(env.Logs.String(), "\n") {
		ok := l != ""
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// TestMailQueuedInTransaction checks that mail is queued with the change
// that causes it: a rolled-back transaction leaves no mail job and sends
// nothing, a committed one is mailed.
func TestMailQueuedInTransaction(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		ctx := context.Background()
		rolled, committed := testenv.Email(), testenv.Email()
		boom := errors.New("roll back")
		err := env.Jobs.Identity().Tx(ctx, func(tx identity.Store) error {
			if err := tx.QueueMail(ctx, mail.Message{To: rolled, Subject: "rolled back", Text: "never sent"}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("transaction: %v; want the rollback error", err)
		}
		if n := len(mailArgs(t, env)); n != 0 {
			t.Fatalf("%d mail jobs after a rollback; want 0", n)
		}
		if err := env.Jobs.Identity().QueueMail(ctx, mail.Message{To: committed, Subject: "committed", Text: "sent"}); err != nil {
			t.Fatal(err)
		}
		if m := env.Mail.WaitFor(t, committed, 5*time.Second); m.Subject != "committed" || !strings.HasPrefix(m.Text, "sent\n") { // and our footer
			t.Errorf("mail received: %q %q", m.Subject, m.Text)
		}
		if n := env.MailsTo(t, rolled); n != 0 {
			t.Errorf("%d mails of the rolled-back transaction; want 0", n)
		}
	})
}

// TestMailSealedInQueue checks that a queued magic link sits in the job
// table sealed: neither its token nor its address nor its text is
// readable in river_job.args.
func TestMailSealedInQueue(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		email := testenv.Email()
		tok := env.MagicToken(t, email)
		args := mailArgs(t, env)
		if len(args) == 0 {
			t.Fatal("no mail job in river_job after a magic link request")
		}
		for _, a := range args {
			for _, secret := range []string{tok, email, "sign-in link", "magic"} {
				if strings.Contains(a, secret) {
					t.Errorf("river_job.args holds %q: %s", secret, a)
				}
			}
		}
	})
}

// TestMailRetried checks that registration answers at once while the SMTP
// server refuses mail, and that the confirmation arrives once it accepts
// again, by a later try of the same job.
func TestMailRetried(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		env.Mail.SetFailing(true)
		email := testenv.Email()
		start := time.Now()
		env.Call(t, "POST", "/v1/auth/register", "", map[string]string{"email": email, "password": "password-1"}).Want(t, 200)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("registration took %v while mail failed; want it not to wait for mail", d)
		}
		for end := time.Now().Add(10 * time.Second); len(logLines(env, "kind=mail", "outcome=retry")) == 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("no failed try of the mail logged in 10 s; log:\n%s", env.Logs.String())
			}
		}
		env.Mail.SetFailing(false)
		env.MailToken(t, email, testenv.VerifyLink)
		if n := env.MailsTo(t, email); n != 1 {
			t.Errorf("%d mails to %s; want 1", n, email)
		}
	})
}

// TestMailGivesUp checks that a message the SMTP server always refuses is
// tried mail.MaxAttempts times, then given up with one log line naming
// its kind, job id and attempt, and that no log line holds a link, a
// body or a recipient.
func TestMailGivesUp(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		env.Mail.SetFailing(true)
		ctx := context.Background()
		direct, magic := testenv.Email(), testenv.Email()
		secret := "body-secret-" + testenv.RandomHex(6)
		if err := env.Jobs.Identity().QueueMail(ctx, mail.Message{To: direct, Subject: "s", Text: "open https://x.test/?token=" + secret}); err != nil {
			t.Fatal(err)
		}
		env.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": magic}).Want(t, 200)
		env.WaitMail(t)
		gaveUp := logLines(env, "kind=mail", "outcome=discarded")
		if len(gaveUp) != 2 {
			t.Fatalf("%d give-up lines for 2 messages; want 2; log:\n%s", len(gaveUp), env.Logs.String())
		}
		for _, l := range gaveUp {
			for _, want := range []string{"job_id=", "attempt=10", "err="} {
				if !strings.Contains(l, want) {
					t.Errorf("give-up line %q lacks %q", l, want)
				}
			}
		}
		if n := len(logLines(env, "kind=mail", "outcome=retry")); n != 2*(mail.MaxAttempts-1) {
			t.Errorf("%d failed tries logged; want %d", n, 2*(mail.MaxAttempts-1))
		}
		for _, leak := range []string{secret, "token=", direct, magic, "sign-in link"} {
			if ls := logLines(env, leak); len(ls) != 0 {
				t.Errorf("log lines hold %q: %q", leak, ls)
			}
		}
		env.Mail.SetFailing(false)
		if n := env.MailsTo(t, direct) + env.MailsTo(t, magic); n != 0 {
			t.Errorf("%d mails after giving up; want 0", n)
		}
	})
}

// TestMailAfterRestart checks that a mail committed by an instance that
// died before its job engine worked it is sent by the next instance on
// the same database: the first "instance" here is identity on the store
// alone, with no engine at all.
func TestMailAfterRestart(t *testing.T) {
	for _, name := range testenv.Databases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			// A database of its own: the test's encryption key is not the
			// one the shared database's signing keys are sealed with.
			db, err := sqlstore.Open(ctx, testenv.FreshURL(t, name))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			queue, key := "restart_"+testenv.RandomHex(6), "encryption-key-"+testenv.RandomHex(16)
			sealer, err := mail.NewSealer([]byte(key))
			if err != nil {
				t.Fatal(err)
			}
			view := db.OnQueue(queue).WithMail(sealer)
			ws := workspace.New(workspace.Config{Store: view.Workspace(), WebURL: "http://web.test"})
			first := identity.New(identity.Config{Store: view.Identity(), Workspace: ws, WebURL: "http://web.test"})
			email := testenv.Email()
			if err := first.RequestMagicLink(ctx, email, ""); err != nil {
				t.Fatal(err)
			}
			if n, err := view.PendingJobs(ctx, "mail"); err != nil || n != 1 {
				t.Fatalf("pending mail jobs = %d, %v; want 1", n, err)
			}
			sink := mailtest.Start(t)
			a := startApp(t, view, sink, key)
			m := sink.WaitFor(t, email, 10*time.Second)
			testenv.TokenFromLink(t, m.Text, testenv.MagicLink)
			a.Close(ctx)
		})
	}
}

// startApp starts a service on db's queue, mailing to sink.
func startApp(t *testing.T, db *sqlstore.DB, sink *mailtest.Sink, key string) *app.App {
	t.Helper()
	var logs testenv.LockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	sender, err := mail.New(mail.Options{URL: sink.URL(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), app.Config{BaseURL: "http://gatehouse.test", APIURL: "http://gatehouse.test",
		WebURL: "http://web.test", JWTSecret: testenv.JWTSecret, EncryptionKey: key},
		app.Deps{DB: db, Mail: sender, Logger: log, JobQueue: db.Queue(), JobPollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
