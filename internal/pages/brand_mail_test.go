package pages_test

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/mail/mailtest"
	"github.com/gatehouse/gatehouse/internal/pages"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestBrandInMail: with GATEHOUSE_BRAND_NAME (and a support URL) set, the
// confirmation, sign-in link, recovery, invitation, Sign request and Forms
// destination confirmation mails name the brand, never Gatehouse, and end
// with the footer naming it and the support URL; without a brand they name
// Gatehouse and end with its footer. A form's autoresponder, the
// customer's own words, is sent as written, without the footer.
func TestBrandInMail(t *testing.T) {
	t.Parallel() // waits on Chromium or on mail jobs, not on the CPU
	for _, c := range []struct {
		brand        pages.Brand
		name, footer string
	}{
		{pages.Brand{Name: "Acme", SupportURL: "https://help.acme.example/mail"}, "Acme", "\n-- \nAcme\nHelp: https://help.acme.example/mail\n"},
		{pages.Brand{}, "Gatehouse", "\n-- \nGatehouse\n"},
	} {
		testenv.RunWith(t, testenv.Options{Brand: c.brand}, func(t *testing.T, env *testenv.Env) {
			owner := env.Register(t) // the confirmation
			env.VerifyEmail(t, owner)
			env.MagicToken(t, owner.Email)
			env.Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": owner.Email}).Want(t, 200)
			org := env.CreateOrg(t, owner, "Branded")
			invited := "invited-" + testenv.RandomHex(4) + "@example.com"
			env.Invite(t, owner.Token, org, invited, "member")
			signer := "signer-" + testenv.RandomHex(4) + "@example.com"
			doc := map[string]any{"name": "Lease", "recipients": []map[string]any{{"name": "Ada", "email": signer}}}
			id := env.CreateDocument(t, owner.Token, testenv.TestPDF, doc).Want(t, 200).Str("document.id")
			env.Do(t, "POST", "/sign/v1/documents/"+id+"/send", owner.Token, nil).Want(t, 200)
			form := env.Do(t, "POST", "/forms/v1/forms", owner.Token, map[string]any{"name": "Contact",
				"autoresponder": map[string]any{"enabled": true, "subject": "Thanks", "body": "We got it."}}).Want(t, 200).Str("form.id")
			outside := "outside-" + testenv.RandomHex(4) + "@example.com"
			env.Do(t, "POST", "/forms/v1/forms/"+form+"/destinations", owner.Token,
				map[string]any{"type": "email", "config": map[string]any{"to": []string{outside}}}).Want(t, 200)
			env.Do(t, "POST", "/forms/f/"+form, "", map[string]string{"email": "visitor-" + testenv.RandomHex(4) + "@example.com"}).Want(t, 200)
			env.WaitMail(t)

			want := map[string]string{"Confirm your email address": owner.Email, "Your sign-in link": owner.Email,
				"Set a new " + c.name + " password": owner.Email, "You are invited to join Branded on " + c.name: invited,
				"Please sign: Lease": signer, "Confirm that you want form submissions by email": outside, "Thanks": ""}
			seen := map[string]bool{}
			for _, m := range env.Mail.Messages() {
				if m.Subject == "Thanks" { // the autoresponder: the customer's words only
					seen[m.Subject] = strings.TrimSpace(m.Text) == "We got it."
					continue
				}
				checkBranded(t, m, c.name, c.footer)
				if to, ok := want[m.Subject]; ok && len(m.To) == 1 && strings.EqualFold(m.To[0], to) {
					seen[m.Subject] = true
				}
			}
			for subject := range want {
				if !seen[subject] {
					t.Errorf("no mail %q", subject)
				}
			}
		})
	}
}

// checkBranded fails t unless m names product name, not another, and ends
// with footer.
func checkBranded(t *testing.T, m mailtest.Received, name, footer string) {
	t.Helper()
	text := strings.ReplaceAll(m.Text, "\r\n", "\n")
	if other := map[string]string{"Acme": "Gatehouse", "Gatehouse": "Acme"}[name]; strings.Contains(m.Subject+text, other) {
		t.Errorf("mail %q names %s:\n%s", m.Subject, other, text)
	}
	if !strings.HasSuffix(text, footer) {
		t.Errorf("mail %q does not end with the footer %q:\n%s", m.Subject, footer, text)
	}
}
