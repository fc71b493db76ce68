package identity

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"golang.org/x/text/language"
)

// TestMailInGerman: every mail of the accounts, written in German, has a
// subject and a text unlike the English ones and shows no English
// sentence of the catalogue (issue 30 item 10); a sentence added to a
// mail without its German fails here.
func TestMailInGerman(t *testing.T) {
	s := &Service{webURL: "https://id.example"}
	mails := map[string]func(lang language.Tag) mail.Message{
		"verify": func(l language.Tag) mail.Message { return s.verifyMail(l, "a@example.com", "secret") },
		"magic": func(l language.Tag) mail.Message {
			return s.magicMail(l, "a@example.com", "https://id.example/auth/magic?token=x")
		},
		"reset": func(l language.Tag) mail.Message { return s.resetMail(l, "a@example.com", "secret") },
		"change": func(l language.Tag) mail.Message {
			return s.changeEmailMail(l, "a@example.com", "b@example.com", "secret")
		},
		"changed": func(l language.Tag) mail.Message {
			return s.emailChangedMail(l, "a@example.com", "b@example.com", "secret")
		},
		"undone": func(l language.Tag) mail.Message { return s.emailUndoneMail(l, "b@example.com", "a@example.com") },
		"codes left": func(l language.Tag) mail.Message {
			k, a := recoveryCodeNotice(3)
			return s.noticeMail(l, "a@example.com", i18n.Tf(l, k, a...))
		},
		"code left": func(l language.Tag) mail.Message {
			k, _ := recoveryCodeNotice(1)
			return s.noticeMail(l, "a@example.com", i18n.T(l, k))
		},
		"no codes left": func(l language.Tag) mail.Message {
			k, _ := recoveryCodeNotice(0)
			return s.noticeMail(l, "a@example.com", i18n.T(l, k))
		},
		"key made": func(l language.Tag) mail.Message {
			return s.noticeMail(l, "a@example.com", i18n.Tf(l, "A personal API key named “%s” was made for your account: it acts as you.", "backup"))
		},
	}
	for _, n := range []string{NoticePassword, NoticePasswordReset, NoticeFactorAdded, NoticeFactorRemoved, NoticeNewCodes, NoticePasskeyAdded, NoticePasskeyGone} {
		mails[n] = func(l language.Tag) mail.Message { return s.noticeMail(l, "a@example.com", i18n.T(l, n)) }
	}
	for name, m := range mails {
		en, de := m(i18n.English), m(i18n.German)
		if de.Subject == en.Subject || de.Text == en.Text {
			t.Errorf("%s: the German mail is the English one: %q", name, de.Subject)
		}
		if leaks := i18n.EnglishLeaks(de.Subject + "\n" + de.Text); len(leaks) > 0 {
			t.Errorf("%s: the German mail shows English: %q\n%s", name, leaks, de.Text)
		}
	}
	if got := s.noticeMail(i18n.German, "a@example.com", i18n.Tf(i18n.German, "A recovery code of your account was used. You have %d left.", 1234)).Text; !strings.Contains(got, "1.234") {
		t.Errorf("a German number is not grouped: %q", got)
	}
}
