package testenv

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The link prefixes of the mails New's service sends (its web and mobile
// bases).
const (
	VerifyLink      = "http://web.test/verify-email?token="
	MagicLink       = "http://web.test/auth/magic?token="
	MobileMagicLink = "https://mobile.test/app/auth/magic?token="
	InviteLink      = "http://web.test/invite?token="
)

// MailToken waits up to 5 s for a message to `to` holding a link that
// starts with prefix and returns the token of the newest such link.
func (e *Env) MailToken(t testing.TB, to, prefix string) string {
	t.Helper()
	return e.WaitMailToken(t, to, prefix, 1)
}

// WaitMailToken waits up to 5 s until the sink holds at least n messages
// to `to` with a link starting with prefix, and returns the newest link's
// token.
func (e *Env) WaitMailToken(t testing.TB, to, prefix string, n int) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		texts := e.MailTexts(to, prefix)
		if len(texts) >= n {
			return TokenFromLink(t, texts[len(texts)-1], prefix)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mails to %s with a link %s… after 5s; want %d", len(texts), to, prefix, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// MailTexts returns the texts of the messages to `to` that contain prefix,
// oldest first.
func (e *Env) MailTexts(to, prefix string) []string {
	var out []string
	for _, m := range e.Mail.Messages() {
		for _, rcpt := range m.To {
			if strings.EqualFold(rcpt, to) && strings.Contains(m.Text, prefix) {
				out = append(out, m.Text)
				break
			}
		}
	}
	return out
}

// WaitMail waits (up to 30 s) until no mail job of the service is left:
// each has been sent, or given up after its last try.
func (e *Env) WaitMail(t testing.TB) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n, err := e.Jobs.PendingJobs(context.Background(), "mail")
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%d mail jobs still queued after 30 s", n)
		}
	}
}

// MailsTo waits for the service's mail in flight and counts the messages
// the sink received for addr.
func (e *Env) MailsTo(t testing.TB, addr string) int {
	t.Helper()
	e.WaitMail(t)
	n := 0
	for _, m := range e.Mail.Messages() {
		for _, rcpt := range m.To {
			if strings.EqualFold(rcpt, addr) {
				n++
			}
		}
	}
	return n
}

// MagicToken requests a web magic link for email and returns the token of
// the mail that request sent.
func (e *Env) MagicToken(t testing.TB, email string) string {
	t.Helper()
	before := len(e.MailTexts(email, MagicLink))
	e.Call(t, "POST", "/v1/auth/magic-link", "", map[string]string{"email": email}).Want(t, 200)
	return e.WaitMailToken(t, email, MagicLink, before+1)
}

// VerifyEmail opens the confirmation link mailed to a at registration.
func (e *Env) VerifyEmail(t testing.TB, a *Account) {
	t.Helper()
	// The confirmation mail by its link: a security notice (a factor or
	// key added since registering) may have reached the sink first.
	tok := e.MailToken(t, a.Email, VerifyLink)
	r := e.Do(t, "POST", "/v1/auth/verify-email", "", map[string]string{"token": tok}).Want(t, 200)
	if r.Get("user.email_verified") != true {
		t.Fatalf("verify-email answered %s; want user.email_verified true", r.Body)
	}
}

// VerifiedAt registers an account at domain and confirms its address.
func (e *Env) VerifiedAt(t testing.TB, domain string) *Account {
	t.Helper()
	a := e.RegisterAt(t, domain)
	e.VerifyEmail(t, a)
	return a
}
