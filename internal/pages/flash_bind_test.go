package pages

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestShowOnceBinding: a sealed secret opens only for the page path and
// object id it was set for; the pages alone cannot show this, since no
// other page lists the same id.
func TestShowOnceBinding(t *testing.T) {
	h := &handlers{shown: processBox()}
	set := httptest.NewRecorder()
	h.showOnce(set, "/account/keys", "key-1", "svc_u_secret")
	cookie := set.Result().Cookies()[0]
	take := func(path, value string) (string, string) {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(&http.Cookie{Name: cookie.Name, Value: value})
		return h.takeShown(httptest.NewRecorder(), r, path)
	}
	if id, secret := take("/account/keys", cookie.Value); id != "key-1" || secret != "svc_u_secret" {
		t.Fatalf("the page it was set for: %q %q", id, secret)
	}
	if _, secret := take("/account/two-factor", cookie.Value); secret != "" {
		t.Errorf("opened on another page: %q", secret)
	}
	_, sealed, _ := strings.Cut(cookie.Value, ".")
	if _, secret := take("/account/keys", "key-2."+sealed); secret != "" {
		t.Errorf("opened for another object: %q", secret)
	}
	other := &handlers{shown: processBox()}
	r := httptest.NewRequest(http.MethodGet, "/account/keys", nil)
	r.AddCookie(cookie)
	if _, secret := other.takeShown(httptest.NewRecorder(), r, "/account/keys"); secret != "" {
		t.Errorf("opened under another key: %q", secret)
	}
}
