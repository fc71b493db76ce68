package pages_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestPagesShareAPILimits: an action's API route and its hosted page spend
// one per-IP budget, so a client refused by the API cannot go on through the
// page (or the other way round): 30 API logins from one address leave the
// sign-in page refusing that address, not another.
func TestPagesShareAPILimits(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		const ip = "127.0.0.7"
		api := env.From(t, ip)
		for i := range 30 {
			if r := api.Call(t, "POST", "/v1/auth/login", "", map[string]string{"email": testenv.Email(), "password": "wrong password " + a.Password}); r.Status != http.StatusUnauthorized {
				t.Fatalf("API login %d: %d; want 401", i+1, r.Status)
			}
		}
		form := url.Values{"email": {a.Email}, "password": {a.Password}}
		if p := env.NewBrowser(t).From(t, ip).Post(t, "/signin", form); p.Status != http.StatusTooManyRequests {
			t.Fatalf("sign-in page after the API budget is spent: %d; want 429", p.Status)
		}
		if p := env.NewBrowser(t).From(t, "127.0.0.8").Post(t, "/signin", form); p.Status != http.StatusSeeOther {
			t.Fatalf("sign-in page from another address: %d; want 303", p.Status)
		}

		// The other way round: the recovery page spends the API's budget.
		const ip2 = "127.0.0.9"
		page := env.NewBrowser(t).From(t, ip2)
		for i := range 10 {
			if p := page.Post(t, "/recover", url.Values{"email": {testenv.Email()}}); p.Status >= 400 {
				t.Fatalf("recovery page %d: %d; want success", i+1, p.Status)
			}
		}
		env.From(t, ip2).Call(t, "POST", "/v1/auth/recover", "", map[string]string{"email": testenv.Email()}).Want(t, http.StatusTooManyRequests)
	})
}

// TestPagesShareAddressLimits: the links mailed to one address have one
// budget (5, then 1 per 2 minutes), kept by the service, whichever edge
// asks and from whichever IP: three through the API and two through the
// page spend it, and the sixth is refused by both without a mail.
func TestPagesShareAddressLimits(t *testing.T) {
	testenv.RunWith(t, testenv.Options{RateLimit: true}, func(t *testing.T, env *testenv.Env) {
		for _, c := range []struct{ api, page string }{{"/v1/auth/magic-link", "/signin/magic"}, {"/v1/auth/recover", "/recover"}} {
			t.Run(c.page, func(t *testing.T) {
				a := env.Register(t)
				env.WaitMail(t)
				before := env.MailsTo(t, a.Email)
				ip := 10
				from := func() string { ip++; return "127.0.2." + strconv.Itoa(ip) }
				for i := range 3 {
					if r := env.From(t, from()).Call(t, "POST", c.api, "", map[string]string{"email": a.Email}); r.Status != http.StatusOK {
						t.Fatalf("API request %d: %d; want 200", i+1, r.Status)
					}
				}
				for i := range 2 {
					if p := env.NewBrowser(t).From(t, from()).Post(t, c.page, url.Values{"email": {strings.ToUpper(a.Email)}}); p.Status != http.StatusOK {
						t.Fatalf("page request %d: %d; want 200", i+1, p.Status)
					}
				}
				p := env.NewBrowser(t).From(t, from()).Post(t, c.page, url.Values{"email": {a.Email}})
				wantPage(t, "sixth link through the page", p, http.StatusTooManyRequests, "Too many links requested")
				env.From(t, from()).Call(t, "POST", c.api, "", map[string]string{"email": a.Email}).Want(t, http.StatusTooManyRequests)
				env.WaitMail(t)
				if n := env.MailsTo(t, a.Email) - before; n != 5 {
					t.Errorf("%d mails for the address; want 5", n)
				}
			})
		}
	})
}
