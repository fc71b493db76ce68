package binary

import (
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/internal/sso/ssotest"
	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestBinarySocialSignIn: social sign-in in the binary as shipped,
// configured only by the README's GATEHOUSE_SOCIAL_* settings (issue 27
// item 1): the provider is listed, a first sign-in makes an account and
// a session (amr social) through the browser's redirects, and a second
// sign-in of the same subject finds the same account. The provider is an
// OpenID provider on loopback (the test allows private addresses).
func TestBinarySocialSignIn(t *testing.T) {
	idp := ssotest.New(t)
	s := start(t, testenv.FreshURL(t, "sqlite"), "GATEHOUSE_SOCIAL_PROVIDERS=acme", "GATEHOUSE_SOCIAL_ACME_ISSUER="+idp.URL,
		"GATEHOUSE_SOCIAL_ACME_CLIENT_ID="+ssotest.Client, "GATEHOUSE_SOCIAL_ACME_CLIENT_SECRET="+ssotest.Secret,
		"GATEHOUSE_SOCIAL_ACME_LABEL=Acme ID")
	if r := s.do(t, "GET", "/v1/sso/providers", "", nil, 200); !strings.Contains(string(r.Body), `"label":"Acme ID"`) {
		t.Fatalf("providers = %s; want Acme ID", r.Body)
	}
	if r := s.do(t, "GET", "/signin", "", nil, 200); !strings.Contains(string(r.Body), "Acme ID") {
		t.Errorf("the sign-in page has no Acme ID button")
	}
	email := "sam-" + testenv.RandomHex(3) + "@example.com"
	idp.SetClaims(map[string]any{"sub": "sam-" + testenv.RandomHex(4), "email": email, "email_verified": true, "name": "Sam Social"})
	signIn := func() (sub string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar}
		resp, err := client.Get(s.base + "/v1/sso/social/acme/start?next=/account")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Request.URL.Path != "/account" {
			t.Fatalf("social sign-in ended at %s with %d; want the account page", resp.Request.URL, resp.StatusCode)
		}
		var refresh string
		for _, c := range jar.Cookies(resp.Request.URL) {
			if c.Name == "gatehouse_session" {
				refresh = c.Value
			}
		}
		access := s.do(t, "POST", "/v1/auth/refresh", "", map[string]string{"refresh_token": refresh}, 200).Str("access_token")
		c := testenv.Claims(t, access)
		if !slices.Contains(testenv.Strings(c["amr"]), "social") {
			t.Errorf("claims = %v; want amr social", c)
		}
		if me := s.do(t, "GET", "/v1/auth/me", access, nil, 200); me.Str("user.email") != email {
			t.Errorf("me = %s; want %s", me.Body, email)
		}
		return c["sub"].(string)
	}
	if first, second := signIn(), signIn(); first != second {
		t.Errorf("the second sign-in of the subject reached account %s; want %s", second, first)
	}
}
