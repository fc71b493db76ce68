package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestLinkWebhooks checks the Links webhooks of spec 4.6 and section 6:
// registration (https only, one-time whsec_ secret, default events, no
// wildcard), signed deliveries with the envelope, batched clicks,
// conversions, ping, retries with a stable delivery id, and disabling
// after 20 failed deliveries until PATCH active=true.
func TestLinkWebhooks(t *testing.T) {
	rc := testenv.NewReceiver(t)
	testenv.RunWith(t, testenv.Options{RootCAs: rc.Roots()}, func(t *testing.T, env *testenv.Env) {
		rc.Reset() // one receiver serves both databases' runs
		owner, _ := env.Team(t)
		hooks := "/links/v1/webhooks"
		for _, body := range []any{map[string]any{}, map[string]any{"url": "http://example.com/hook"},
			map[string]any{"url": rc.URL + "/h", "events": []string{"*"}}, map[string]any{"url": rc.URL + "/h", "events": []string{"link.exploded"}},
			map[string]any{"url": "https://127.0.0.1:99999/h"}, map[string]any{"url": "https://user:pw@example.com/h"}} {
			env.Do(t, "POST", hooks, owner.Token, body).Want(t, 400)
		}
		r := env.Do(t, "POST", hooks, owner.Token, map[string]any{"url": rc.URL + "/all",
			"events": []string{"link.created", "link.clicked", "link.converted"}}).Want(t, 200)
		secret, hookID := r.Str("webhook.secret"), r.Str("webhook.id")
		if !strings.HasPrefix(secret, "whsec_") || r.Get("webhook.active") != true {
			t.Fatalf("webhook = %s", r.Body)
		}
		def := env.Do(t, "POST", hooks, owner.Token, map[string]any{"url": rc.URL + "/default"}).Want(t, 200)
		if got := def.Get("webhook.events").([]any); len(got) != 3 {
			t.Errorf("default events = %v; want link.created, link.updated, link.deleted", got)
		}
		list := env.Do(t, "GET", hooks, owner.Token, nil).Want(t, 200)
		if strings.Contains(string(list.Body), "whsec_") || len(list.Get("webhooks").([]any)) != 2 {
			t.Errorf("webhook list = %s; want two, without secrets", list.Body)
		}

		code := "hook-" + testenv.RandomHex(3)
		env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com", "shortCode": code}).Want(t, 200)
		env.Webhooks.Wait()
		created := rc.Events("link.created")
		if len(created) != 2 {
			t.Fatalf("%d link.created deliveries; want 2 (both webhooks)", len(created))
		}
		for _, d := range created {
			if d.ID == "" {
				t.Errorf("delivery without X-Service-Delivery")
			}
			var env struct {
				Event string         `json:"event"`
				At    string         `json:"at"`
				Data  map[string]any `json:"data"`
			}
			if err := json.Unmarshal(d.Body, &env); err != nil || env.Event != "link.created" || env.At == "" || env.Data["shortCode"] != code {
				t.Errorf("envelope = %s", d.Body)
			}
		}
		signed := 0
		for _, d := range created {
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write(d.Body)
			if d.Signature == "sha256="+hex.EncodeToString(mac.Sum(nil)) {
				signed++
			}
		}
		if signed != 1 {
			t.Errorf("%d deliveries signed with the first webhook's secret; want exactly its own", signed)
		}

		var click string
		for range 3 {
			res := env.Follow(t, code)
			click = strings.SplitN(res.Header.Get("Location"), "svc_click=", 2)[1]
		}
		env.Links.Flush()
		env.Do(t, "POST", "/links/v1/conversions", owner.Token, map[string]any{"clickId": click, "name": "signup"}).Want(t, 200)
		env.Webhooks.Wait()
		clicked := rc.Events("link.clicked")
		if len(clicked) != 1 || !strings.Contains(string(clicked[0].Body), `"clicks":3`) || !strings.Contains(string(clicked[0].Body), `"totalClicks":3`) {
			t.Errorf("link.clicked deliveries = %d (%v); want one batch of 3", len(clicked), clicked)
		}
		if conv := rc.Events("link.converted"); len(conv) != 1 || !strings.Contains(string(conv[0].Body), click) {
			t.Errorf("link.converted deliveries = %v", conv)
		}

		env.Do(t, "POST", hooks+"/"+hookID+"/test", owner.Token, nil).Want(t, 200)
		env.Webhooks.Wait()
		if len(rc.Events("ping")) != 1 {
			t.Errorf("ping not delivered")
		}

		// Failures: each delivery is tried three times under one id; 20
		// failed deliveries disable the webhook.
		rc.Fail.Store(true)
		for range 20 {
			env.Do(t, "POST", hooks+"/"+hookID+"/test", owner.Token, nil).Want(t, 200)
			env.Webhooks.Wait()
		}
		rc.Fail.Store(false)
		pings := rc.Events("ping")[1:]
		ids := map[string]int{}
		for _, d := range pings {
			ids[d.ID]++
		}
		if len(ids) != 20 {
			t.Errorf("%d failed deliveries; want 20", len(ids))
		}
		for id, n := range ids {
			if n != 3 {
				t.Errorf("delivery %s tried %d times; want 3 (two retries)", id, n)
			}
		}
		hook := func() map[string]any {
			for _, x := range env.Do(t, "GET", hooks, owner.Token, nil).Want(t, 200).Get("webhooks").([]any) {
				if x.(map[string]any)["id"] == hookID {
					return x.(map[string]any)
				}
			}
			return nil
		}
		h := hook()
		if h["active"] != false || h["failures"] != float64(20) {
			t.Fatalf("after 20 failures webhook = %v; want inactive, 20 failures", h)
		}
		env.Do(t, "POST", "/links/v1/links", owner.Token, map[string]any{"destinationUrl": "https://example.com/2"}).Want(t, 200)
		env.Webhooks.Wait()
		if n := len(rc.Events("link.created")); n != 3 {
			t.Errorf("%d link.created deliveries; want 3 (the disabled webhook gets none)", n)
		}
		p := env.Do(t, "PATCH", hooks+"/"+hookID, owner.Token, map[string]any{"active": true}).Want(t, 200)
		if p.Get("webhook.active") != true || p.Get("webhook.failures") != float64(0) || p.Get("webhook.secret") != nil {
			t.Errorf("re-enabled webhook = %s", p.Body)
		}
		// A failed delivery is counted; the next one delivered resets
		// the count.
		rc.Fail.Store(true)
		env.Do(t, "POST", hooks+"/"+hookID+"/test", owner.Token, nil).Want(t, 200)
		env.Webhooks.Wait()
		if h := hook(); h["failures"] != float64(1) {
			t.Errorf("after one failed delivery webhook = %v; want 1 failure", h)
		}
		rc.Fail.Store(false)
		env.Do(t, "POST", hooks+"/"+hookID+"/test", owner.Token, nil).Want(t, 200)
		env.Webhooks.Wait()
		if h := hook(); h["failures"] != float64(0) {
			t.Errorf("after a delivered one webhook = %v; want 0 failures", h)
		}
		env.Do(t, "DELETE", hooks+"/"+hookID, owner.Token, nil).Want(t, 200)
		env.Do(t, "DELETE", hooks+"/"+hookID, owner.Token, nil).Want(t, 404)
	})
}

// TestWebhookDeletedStopsRetries checks that a webhook deleted while a
// failed delivery waits for its retry gets no further tries.
func TestWebhookDeletedStopsRetries(t *testing.T) {
	var tries atomic.Int32
	var del atomic.Value // func(), set once the webhook exists
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Service-Event") == "ping" {
			if tries.Add(1) == 1 {
				del.Load().(func())() // delete it before answering the first try
			}
		}
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	testenv.RunWith(t, testenv.Options{RootCAs: roots}, func(t *testing.T, env *testenv.Env) {
		tries.Store(0)
		owner, _ := env.Team(t)
		id := env.Do(t, "POST", "/links/v1/webhooks", owner.Token, map[string]any{"url": srv.URL + "/h"}).Want(t, 200).Str("webhook.id")
		del.Store(func() {
			req, _ := http.NewRequest("DELETE", env.URL+"/links/v1/webhooks/"+id, nil)
			req.Header.Set("Authorization", "Bearer "+owner.Token)
			if res, err := env.Client.Do(req); err == nil {
				res.Body.Close()
			}
		})
		env.Do(t, "POST", "/links/v1/webhooks/"+id+"/test", owner.Token, nil).Want(t, 200)
		env.Webhooks.Wait()
		if n := tries.Load(); n != 1 {
			t.Errorf("%d tries; want 1 (the webhook was deleted before the first retry)", n)
		}
	})
}

// TestSignWebhookLimit checks the Sign webhook rules: the wildcard is
// allowed and one account registers at most 10.
func TestSignWebhookLimit(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		owner, _ := env.Team(t)
		for i := range 10 {
			r := env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": "https://hooks.example.com/" + string(rune('a'+i)), "events": []string{"*"}}).Want(t, 200)
			if !strings.HasPrefix(r.Str("webhook.secret"), "whsec_") {
				t.Fatalf("webhook = %s", r.Body)
			}
		}
		env.Do(t, "POST", "/sign/v1/webhooks", owner.Token, map[string]any{"url": "https://hooks.example.com/k"}).Want(t, 409)
		env.Do(t, "POST", "/sign/v1/webhooks/"+uuid.NewString()+"/test", owner.Token, nil).Want(t, 404) // Links only
	})
}
