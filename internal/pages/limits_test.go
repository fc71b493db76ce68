package pages_test

import (
	"net/http"
	"net/url"
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
