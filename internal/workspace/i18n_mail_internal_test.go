package workspace

import (
	"testing"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
)

// TestInvitationMailInGerman: the invitation, written in German, is
// unlike the English one and shows no English sentence of the catalogue.
func TestInvitationMailInGerman(t *testing.T) {
	s := &Service{}
	inv, link := &Invitation{Email: "b@example.com", Role: RoleMember}, "https://id.example/invite?token=x"
	org, inviter := &Org{Name: "Hafen"}, &gatehouse.User{Name: "Erika"}
	en, de := s.invitationMail(i18n.English, inv, link, org, inviter), s.invitationMail(i18n.German, inv, link, org, inviter)
	if de.Subject == en.Subject || de.Text == en.Text {
		t.Fatalf("the German invitation is the English one: %q", de.Subject)
	}
	if leaks := i18n.EnglishLeaks(de.Subject + "\n" + de.Text); len(leaks) > 0 {
		t.Fatalf("the German invitation shows English: %q\n%s", leaks, de.Text)
	}
}
