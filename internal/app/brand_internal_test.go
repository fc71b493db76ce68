package app

import (
	"testing"

	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/pages"
)

// TestMailBrand: mail gets the pages' product name and support link, a
// link that is a path of this server made absolute on the web URL.
func TestMailBrand(t *testing.T) {
	for _, c := range []struct {
		support, want string
	}{
		{"", ""},
		{"https://help.acme.example/", "https://help.acme.example/"},
		{"/help", "https://id.acme.example/help"},
	} {
		got := mailBrand(Config{WebURL: "https://id.acme.example/", Brand: pages.Brand{Name: "Acme", SupportURL: c.support}})
		if want := (mail.Brand{Name: "Acme", SupportURL: c.want}); got != want {
			t.Errorf("support %q: %+v; want %+v", c.support, got, want)
		}
	}
}
