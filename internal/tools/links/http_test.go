package links_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestLinks checks the Links tool API: links, the public redirect with
// its click ids, conversions, scoping, and audit entries.
func TestLinks(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, org := env.Team(t)
		stranger, _ := env.Team(t)

		env.Do(t, "GET", "/links/v1/links", "", nil).Want(t, 401)
		for _, body := range []any{map[string]any{}, map[string]any{"destinationUrl": "ftp://example.com/x"},
			map[string]any{"destinationUrl": "javascript:alert(1)"}, map[string]any{"destinationUrl": "https://example.com", "shortCode": "bad code!"},
			map[string]any{"destinationUrl": 5}} {
			env.Do(t, "POST", "/links/v1/links", owner.Token, body).Want(t, 400)
		}
		code := "docs-" + testenv.RandomHex(3)
		r := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/docs?x=1", "title": "Docs", "shortCode": code}).Want(t, 200)
		link := r.Obj(t, "link")
		testenv.CheckKeys(t, "link", link, "id", "shortCode", "shortUrl", "destinationUrl", "title", "active", "archived", "clicks", "created")
		id := r.Str("link.id")
		if link["shortCode"] != code || link["shortUrl"] != env.ShortLinkURL+"/"+code || link["active"] != true || link["archived"] != false || link["clicks"] != float64(0) {
			t.Errorf("link = %s", r.Body)
		}
		env.Do(t, "POST", "/links/v1/links", stranger.Token, map[string]any{"destinationUrl": "https://example.com", "shortCode": code}).Want(t, 409)
		auto := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/a"}).Want(t, 200)
		if len(auto.Str("link.shortCode")) != 7 {
			t.Errorf("made-up short code = %q; want 7 characters", auto.Str("link.shortCode"))
		}

		res := env.Follow(t, code)
		loc, _ := url.Parse(res.Header.Get("Location"))
		click := loc.Query().Get("svc_click")
		if res.StatusCode != http.StatusFound || loc.Host != "example.com" || loc.Query().Get("x") != "1" || click == "" {
			t.Fatalf("follow: %d to %q; want 302 to the destination with svc_click", res.StatusCode, res.Header.Get("Location"))
		}
		env.Follow(t, code)
		if n := env.Do(t, "GET", "/links/v1/links/"+id, owner.Token, nil).Want(t, 200).Get("link.clicks"); n != float64(2) {
			t.Errorf("clicks = %v; want 2", n)
		}
		if res := env.Follow(t, "nope-"+testenv.RandomHex(4)); res.StatusCode != 404 {
			t.Errorf("unknown code: %d; want 404", res.StatusCode)
		}

		conv := env.Do(t, "POST", "/links/v1/conversions", owner.Token, map[string]any{"clickId": click, "name": "signup", "amountCents": 1999, "currency": "eur"}).Want(t, 200)
		if conv.Str("conversion.linkId") != id || conv.Str("conversion.currency") != "EUR" || conv.Get("conversion.amountCents") != float64(1999) {
			t.Errorf("conversion = %s", conv.Body)
		}
		env.Do(t, "POST", "/links/v1/conversions", stranger.Token, map[string]any{"clickId": click, "name": "signup"}).Want(t, 404)
		env.Do(t, "POST", "/links/v1/conversions", owner.Token, map[string]any{"clickId": uuid.NewString(), "name": "signup"}).Want(t, 404)
		env.Do(t, "POST", "/links/v1/conversions", owner.Token, map[string]any{"clickId": click}).Want(t, 400)
		env.Do(t, "POST", "/links/v1/conversions", owner.Token, map[string]any{"clickId": click, "name": "x", "currency": "euro"}).Want(t, 400)

		// Inactive and archived links do not redirect; updates keep the code.
		env.Do(t, "PATCH", "/links/v1/links/"+id, owner.Token, map[string]any{"active": false}).Want(t, 200)
		if res := env.Follow(t, code); res.StatusCode != 404 {
			t.Errorf("inactive link: %d; want 404", res.StatusCode)
		}
		u := env.Do(t, "PATCH", "/links/v1/links/"+id, owner.Token, map[string]any{"active": true, "archived": true, "destinationUrl": "https://example.org/new"}).Want(t, 200)
		if u.Str("link.destinationUrl") != "https://example.org/new" || u.Get("link.archived") != true || u.Str("link.shortCode") != code {
			t.Errorf("updated link = %s", u.Body)
		}
		if res := env.Follow(t, code); res.StatusCode != 404 {
			t.Errorf("archived link: %d; want 404", res.StatusCode)
		}
		env.Do(t, "PATCH", "/links/v1/links/"+id, owner.Token, map[string]any{"shortCode": "other"}).Want(t, 400)
		env.Do(t, "PATCH", "/links/v1/links/"+id, stranger.Token, map[string]any{"title": "x"}).Want(t, 404)
		env.Do(t, "GET", "/links/v1/links/"+id, stranger.Token, nil).Want(t, 404)
		if got := env.Do(t, "GET", "/links/v1/links", owner.Token, nil).Want(t, 200).Get("links").([]any); len(got) != 2 || got[0].(map[string]any)["id"] != auto.Str("link.id") {
			t.Errorf("links = %v; want both, newest first", got)
		}
		env.Do(t, "DELETE", "/links/v1/links/"+id, stranger.Token, nil).Want(t, 404)
		env.Do(t, "DELETE", "/links/v1/links/"+id, owner.Token, nil).Want(t, 200)
		env.Do(t, "GET", "/links/v1/links/"+id, owner.Token, nil).Want(t, 404)

		actions := map[string]int{}
		for _, e := range env.Audit(t, owner.Token, org, "tool=links") {
			actions[e["action"].(string)]++
		}
		if actions["links.link.created"] != 2 || actions["links.link.updated"] != 2 || actions["links.link.deleted"] != 1 || actions["links.conversion.created"] != 1 {
			t.Errorf("links audit actions = %v", actions)
		}
	})
}

// TestLinkClicksRace checks that concurrent follows are all counted.
func TestLinkClicksRace(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		code := "race-" + testenv.RandomHex(4)
		id := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com", "shortCode": code}).Want(t, 200).Str("link.id")
		clicks := map[string]bool{}
		rs := testenv.AtOnceAnswers(20, func(int) *testenv.Resp {
			res := env.Follow(t, code)
			return &testenv.Resp{Status: res.StatusCode, Header: res.Header}
		})
		for _, r := range rs {
			loc, _ := url.Parse(r.Header.Get("Location"))
			if r.Status != http.StatusFound {
				t.Fatalf("follow: %d", r.Status)
			}
			clicks[loc.Query().Get("svc_click")] = true
		}
		if len(clicks) != 20 {
			t.Errorf("%d distinct click ids; want 20", len(clicks))
		}
		if n := env.Do(t, "GET", "/links/v1/links/"+id, owner.Token, nil).Want(t, 200).Get("link.clicks"); n != float64(20) {
			t.Errorf("clicks = %v; want 20", n)
		}
	})
}

// TestLinkRedirectKeepsQuery checks that the redirect appends svc_click to
// the destination's query exactly as stored, order and odd pairs kept.
func TestLinkRedirectKeepsQuery(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		for _, dest := range []string{"https://example.com/p?z=1&a=2;b&flag#frag", "https://example.com/"} {
			r := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": dest}).Want(t, 200)
			res := env.Follow(t, r.Str("link.shortCode"))
			loc := res.Header.Get("Location")
			base, frag, _ := strings.Cut(dest, "#")
			sep := "&"
			if !strings.Contains(base, "?") {
				sep = "?"
			}
			if !strings.HasPrefix(loc, base+sep+"svc_click=") || (frag != "" && !strings.HasSuffix(loc, "#"+frag)) {
				t.Errorf("redirect for %q = %q; want the destination with svc_click appended", dest, loc)
			}
		}
		env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com:99999/"}).Want(t, 400)

		// A workspace with Links disabled serves no redirects.
		code := env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/"}).Want(t, 200).Str("link.shortCode")
		org := env.Do(t, "GET", "/v1/auth/me", owner.Token, nil).Want(t, 200).Str("org.id")
		env.SetTool(t, owner.Token, org, "links", false)
		if res := env.Follow(t, code); res.StatusCode != 404 {
			t.Errorf("redirect with Links disabled: %d; want 404", res.StatusCode)
		}
		env.SetTool(t, owner.Token, org, "links", true)
		if res := env.Follow(t, code); res.StatusCode != 302 {
			t.Errorf("redirect with Links enabled again: %d; want 302", res.StatusCode)
		}
	})
}
