package pages_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// benchBrowser is a browser signed in as a new owner of a team workspace,
// on SQLite, for the pages' benchmarks.
func benchBrowser(b *testing.B) (*testenv.Browser, string) {
	env := testenv.New(b, "sqlite", testenv.Options{})
	owner, org := env.Team(b)
	br := env.NewBrowser(b)
	if res := br.Post(b, "/signin", url.Values{"email": {owner.Email}, "password": {owner.Password}}); res.Status != http.StatusSeeOther {
		b.Fatalf("sign-in: %d", res.Status)
	}
	return br, org
}

// BenchmarkKeyPage measures GET /account/keys, a console view through the
// adapter (server and test client together, in process).
func BenchmarkKeyPage(b *testing.B) {
	br, _ := benchBrowser(b)
	b.ReportAllocs()
	for b.Loop() {
		if res := br.Get(b, "/account/keys"); res.Status != http.StatusOK {
			b.Fatalf("keys page: %d", res.Status)
		}
	}
}

// BenchmarkRefusedTeamForm measures a team form refused for its empty
// name: the adapter shows the page again with the message by the field.
func BenchmarkRefusedTeamForm(b *testing.B) {
	br, org := benchBrowser(b)
	form := url.Values{"name": {""}}
	b.ReportAllocs()
	for b.Loop() {
		if res := br.Post(b, "/workspaces/"+org+"/teams", form); res.Status != http.StatusBadRequest {
			b.Fatalf("refused team form: %d", res.Status)
		}
	}
}
