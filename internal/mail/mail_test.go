package mail_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	netmail "net/mail"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
)

// resetLink is long enough for quoted-printable to fold it and full of the
// characters (=, &, _, -, %) that a wrong decoder would mangle.
const resetLink = "https://accounts.example.test/v1/password-reset/confirm?token=abc_DEF-123" +
	"&email=ana%40example.test&next=%2Fsettings%2Fsecurity%3Ftab%3Dpasswords&lang=pt-BR&x=y"

const resetText = "Olá Ana,\n\nTo choose a new password, open this link within an hour:\n\n" +
	resetLink + "\n\nIf you did not ask for this, ignore this mail.\n"

const waitTimeout = 5 * time.Second

// newSender calls mail.New and fails the test on error.
func newSender(t *testing.T, o mail.Options) mail.Sender {
	t.Helper()
	s, err := mail.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// withUser returns rawURL with user and password set, percent-encoded.
func withUser(t *testing.T, rawURL, user, password string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("parse %q: %v", rawURL, err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

func TestSendDeliversTextVerbatim(t *testing.T) {
	sink := mailtest.Start(t)
	s := newSender(t, mail.Options{URL: sink.URL(), From: "Gatehouse Accounts <accounts@example.test>"})

	err := s.Send(context.Background(), mail.Message{
		To:      "ana@example.test",
		Subject: "Redefinição de senha – Gatehouse",
		Text:    resetText,
	})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}

	got := sink.WaitFor(t, "ANA@example.test", waitTimeout)
	if got.Text != resetText {
		t.Errorf("Text = %q, want %q", got.Text, resetText)
	}
	if !strings.Contains(got.Text, resetLink) {
		t.Errorf("Text does not contain the link verbatim: %q", got.Text)
	}
	if got.Subject != "Redefinição de senha – Gatehouse" {
		t.Errorf("Subject = %q, want %q", got.Subject, "Redefinição de senha – Gatehouse")
	}
	if !slices.Equal(got.To, []string{"ana@example.test"}) {
		t.Errorf("To = %q, want %q", got.To, []string{"ana@example.test"})
	}
	from, err := netmail.ParseAddress(got.From)
	if err != nil {
		t.Fatalf("From %q: %v", got.From, err)
	}
	if from.Name != "Gatehouse Accounts" || from.Address != "accounts@example.test" {
		t.Errorf("From = %q, want name %q and address %q", got.From, "Gatehouse Accounts", "accounts@example.test")
	}
	if got.TLS {
		t.Errorf("TLS = true on a sink without STARTTLS, want false")
	}
	if got.Username != "" {
		t.Errorf("Username = %q with no user in the URL, want none", got.Username)
	}
	if n := len(sink.Messages()); n != 1 {
		t.Errorf("sink has %d messages, want 1", n)
	}
}

func TestSendSubjectCannotAddHeaders(t *testing.T) {
	sink := mailtest.Start(t)
	s := newSender(t, mail.Options{URL: sink.URL()})

	subject := "Hello\r\nBcc: mallory@example.test"
	if err := s.Send(context.Background(), mail.Message{To: "ana@example.test", Subject: subject, Text: "hi"}); err != nil {
		t.Fatalf("Send: %v", err)
	}

	got := sink.WaitFor(t, "ana@example.test", waitTimeout)
	if !slices.Equal(got.To, []string{"ana@example.test"}) {
		t.Errorf("To = %q, want %q", got.To, []string{"ana@example.test"})
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(got.Raw))
	if err != nil {
		t.Fatalf("read raw message: %v", err)
	}
	if bcc := msg.Header.Get("Bcc"); bcc != "" {
		t.Errorf("Bcc header = %q, want none", bcc)
	}
}

func TestSendSTARTTLS(t *testing.T) {
	sink, tlsConfig := mailtest.StartTLS(t)

	t.Run("trusted certificate", func(t *testing.T) {
		s := newSender(t, mail.Options{URL: sink.URL(), TLSConfig: tlsConfig})
		if err := s.Send(context.Background(), mail.Message{To: "starttls@example.test", Subject: "s", Text: resetText}); err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := sink.WaitFor(t, "starttls@example.test", waitTimeout)
		if !got.TLS {
			t.Errorf("TLS = false, want true after STARTTLS")
		}
		if got.Text != resetText {
			t.Errorf("Text = %q, want %q", got.Text, resetText)
		}
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		// With the system roots the self-signed certificate must be refused,
		// not skipped over.
		s := newSender(t, mail.Options{URL: sink.URL()})
		err := s.Send(context.Background(), mail.Message{To: "untrusted@example.test", Subject: "s", Text: "t"})
		if err == nil {
			t.Fatalf("Send with an untrusted certificate: got nil error, want one")
		}
		if !strings.Contains(err.Error(), "certificate") {
			t.Errorf("Send error = %q, want it to mention the certificate", err)
		}
	})
}

func TestSendImplicitTLS(t *testing.T) {
	sink, tlsConfig := mailtest.StartImplicitTLS(t)
	if !strings.HasPrefix(sink.URL(), "smtps://") {
		t.Fatalf("URL = %q, want smtps://", sink.URL())
	}
	url := withUser(t, sink.URL(), "mailer", "s3cret")
	s := newSender(t, mail.Options{URL: url, TLSConfig: tlsConfig})

	if err := s.Send(context.Background(), mail.Message{To: "smtps@example.test", Subject: "s", Text: resetText}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := sink.WaitFor(t, "smtps@example.test", waitTimeout)
	if !got.TLS {
		t.Errorf("TLS = false, want true over smtps")
	}
	if got.Username != "mailer" || got.Password != "s3cret" {
		t.Errorf("credentials = %q:%q, want %q:%q", got.Username, got.Password, "mailer", "s3cret")
	}
	if got.Text != resetText {
		t.Errorf("Text = %q, want %q", got.Text, resetText)
	}
}

func TestSendAuth(t *testing.T) {
	sink := mailtest.Start(t)
	const user, password = "mailer@example.test", "p@ss:w/rd%?#&"
	s := newSender(t, mail.Options{URL: withUser(t, sink.URL(), user, password)})

	if err := s.Send(context.Background(), mail.Message{To: "auth@example.test", Subject: "s", Text: "t"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := sink.WaitFor(t, "auth@example.test", waitTimeout)
	if got.Username != user {
		t.Errorf("Username = %q, want %q", got.Username, user)
	}
	if got.Password != password {
		t.Errorf("Password = %q, want %q", got.Password, password)
	}
	from, err := netmail.ParseAddress(got.From)
	if err != nil {
		t.Fatalf("From %q: %v", got.From, err)
	}
	if from.Address != "no-reply@localhost" {
		t.Errorf("default From address = %q, want %q", from.Address, "no-reply@localhost")
	}
}

func TestLogSender(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	s := newSender(t, mail.Options{Logger: logger})

	m := mail.Message{To: "ana@example.test", Subject: "Reset your password", Text: resetText}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}

	var record struct {
		Level, Msg, To, Subject, Text string
	}
	if err := json.Unmarshal(buf.Bytes(), &record); err != nil {
		t.Fatalf("log output %q: %v", buf.String(), err)
	}
	if record.Level != "INFO" {
		t.Errorf("level = %q, want INFO", record.Level)
	}
	if record.To != m.To {
		t.Errorf("to = %q, want %q", record.To, m.To)
	}
	if record.Subject != m.Subject {
		t.Errorf("subject = %q, want %q", record.Subject, m.Subject)
	}
	if record.Text != m.Text {
		t.Errorf("text = %q, want %q", record.Text, m.Text)
	}
}

func TestSendFailure(t *testing.T) {
	const password = "hunter2-secret"

	t.Run("sink rejects data", func(t *testing.T) {
		sink := mailtest.Start(t)
		s := newSender(t, mail.Options{URL: withUser(t, sink.URL(), "mailer", password)})
		m := mail.Message{To: "fail@example.test", Subject: "s", Text: "t"}

		sink.SetFailing(true)
		err := s.Send(context.Background(), m)
		if err == nil {
			t.Fatalf("Send to a failing sink: got nil error, want one")
		}
		checkSendError(t, err, password)
		if !strings.Contains(err.Error(), "554") {
			t.Errorf("Send error = %q, want the server's 554", err)
		}
		if strings.Contains(err.Error(), m.To) {
			t.Errorf("Send error = %q names the recipient; it reaches the log", err)
		}
		if n := len(sink.Messages()); n != 0 {
			t.Errorf("failing sink kept %d messages, want 0", n)
		}

		sink.SetFailing(false)
		if err := s.Send(context.Background(), m); err != nil {
			t.Fatalf("Send after SetFailing(false): %v", err)
		}
		sink.WaitFor(t, "fail@example.test", waitTimeout)
	})

	t.Run("sink rejects the recipient", func(t *testing.T) {
		sink := mailtest.Start(t)
		s := newSender(t, mail.Options{URL: sink.URL()})
		sink.SetRejectRecipients(true)
		err := s.Send(context.Background(), mail.Message{To: "nobody@example.test", Subject: "s", Text: "t"})
		if err == nil {
			t.Fatal("Send to a refused recipient: got nil error, want one")
		}
		if strings.Contains(err.Error(), "nobody") || !strings.Contains(err.Error(), "550") {
			t.Errorf("Send error = %q; want the 550 without the address (the error reaches the log)", err)
		}
	})

	t.Run("nothing listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		s := newSender(t, mail.Options{URL: "smtp://mailer:" + password + "@" + addr, Timeout: 2 * time.Second})
		err = s.Send(context.Background(), mail.Message{To: "a@example.test", Subject: "s", Text: "t"})
		if err == nil {
			t.Fatalf("Send to a closed port: got nil error, want one")
		}
		checkSendError(t, err, password)
	})

	t.Run("bad recipient", func(t *testing.T) {
		sink := mailtest.Start(t)
		s := newSender(t, mail.Options{URL: sink.URL()})
		err := s.Send(context.Background(), mail.Message{To: "not an address", Subject: "s", Text: "t"})
		if err == nil {
			t.Fatalf("Send to %q: got nil error, want one", "not an address")
		}
		checkSendError(t, err, password)
	})

	t.Run("context canceled", func(t *testing.T) {
		sink := mailtest.Start(t)
		s := newSender(t, mail.Options{URL: sink.URL()})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := s.Send(ctx, mail.Message{To: "a@example.test", Subject: "s", Text: "t"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Send with a canceled context = %v, want context.Canceled", err)
		}
		if n := len(sink.Messages()); n != 0 {
			t.Errorf("sink got %d messages, want 0", n)
		}
	})
}

// checkSendError checks the wrapping of a Send error and that it keeps the
// password out.
func checkSendError(t *testing.T, err error, password string) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "send mail: ") {
		t.Errorf("Send error = %q, want prefix %q", err, "send mail: ")
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("Send error = %q, contains the password", err)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		o    mail.Options
		want string
	}{
		{"bad from", mail.Options{From: "Gatehouse"}, "from address"},
		{"bad url", mail.Options{URL: "ftp://mail.example.test:21"}, "scheme"},
		{"negative timeout", mail.Options{URL: "smtp://mail.example.test:587", Timeout: -time.Second}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := mail.New(tt.o)
			if err == nil {
				t.Fatalf("New(%+v) = %v, nil; want an error", tt.o, s)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr string // "" for a good URL
	}{
		{"", ""}, // log mode
		{"smtp://mail.example.test:587", ""},
		{"smtps://mail.example.test:465", ""},
		{"smtp://mailer:secret@mail.example.test:587", ""},
		{"smtps://mailer%40example.test:p%40ss%2Fw%3Ard@mail.example.test:465", ""},
		{"smtp://mailer@mail.example.test:25", ""},
		{"smtp://127.0.0.1:2525", ""},
		{"smtp://[::1]:25/", ""},
		{"ftp://mail.example.test:21", `scheme "ftp"`},
		{"mail.example.test:587", "scheme"},
		{"//mail.example.test:587", "scheme missing"},
		{"smtp:mail.example.test:587", "want smtp://host:port"},
		{"smtp://mail.example.test", "port missing (usually 587"},
		{"smtps://mail.example.test", "port missing (usually 465"},
		{"smtp://mail.example.test:", "port missing"},
		{"smtp://:587", "host missing"},
		{"smtp://", "host missing"},
		{"smtp://mailer:secret@:587", "host missing"},
		{"smtp://mail.example.test:0", "out of range"},
		{"smtp://mail.example.test:70000", "out of range"},
		{"smtp://mail.example.test:smtp", "invalid port"},
		{"smtp://mail.example.test:587/relay", "unexpected path"},
		{"smtp://mail.example.test:587?starttls=no", "unexpected path, query"},
		{"smtp://:secret@mail.example.test:587", "user name missing"},
		{"smtp://mailer:sec/ret@mail.example.test:587", "percent-encode"},
		{"smtp://mailer:sec ret@mail.example.test:587", "percent-encode"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			err := mail.ParseURL(tt.raw)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ParseURL(%q) = %v, want nil", tt.raw, err)
			case tt.wantErr == "":
				return
			case err == nil:
				t.Fatalf("ParseURL(%q) = nil, want an error containing %q", tt.raw, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseURL(%q) = %q, want it to contain %q", tt.raw, err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "smtp url: ") {
				t.Errorf("ParseURL(%q) = %q, want prefix %q", tt.raw, err, "smtp url: ")
			}
			for _, secret := range []string{"secret", "sec/ret", "sec ret", "ret@"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("ParseURL(%q) = %q, repeats the password", tt.raw, err)
				}
			}
		})
	}
}
