package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// introspection is the introspect target's state: a resource server's
// token (exchanged for a workspace key) and a member's access token of
// the same workspace, which it asks about.
type introspection struct {
	url    string
	caller string
	body   []byte
}

// introspectTarget measures "POST /oauth/introspect" (RFC 7662) as a
// resource server calls it: the caller is the access token of a
// workspace key (svc_o_), the token a live access token of a member of
// that workspace, so every answer is active true.
func introspectTarget() target {
	return newTarget("introspect",
		func(ctx context.Context, e *env) (introspection, error) {
			var org struct {
				AccessToken string `json:"access_token"`
				Org         struct {
					ID string `json:"id"`
				} `json:"org"`
			}
			if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs", e.user.session.AccessToken,
				map[string]string{"name": "Bench Introspect"}, &org); err != nil {
				return introspection{}, err
			}
			var key struct {
				APIKey struct {
					Secret string `json:"secret"`
				} `json:"api_key"`
			}
			if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org.Org.ID+"/api-keys", org.AccessToken,
				map[string]string{"name": "resource server", "role": "member"}, &key); err != nil {
				return introspection{}, err
			}
			var caller struct {
				AccessToken string `json:"access_token"`
			}
			if err := callJSON(ctx, e.client, http.MethodPost, e.baseURL+"/v1/auth/token", map[string]string{"api_key": key.APIKey.Secret}, &caller); err != nil {
				return introspection{}, err
			}
			s := introspection{url: e.baseURL + "/oauth/introspect", caller: caller.AccessToken,
				body: []byte(url.Values{"token": {org.AccessToken}}.Encode())}
			// One call first: an older binary has no such route (skipped),
			// and a setup whose answers are not active measures nothing.
			req, err := s.request()
			if err != nil {
				return s, err
			}
			resp, err := e.client.Do(req.WithContext(ctx))
			if err != nil {
				return s, err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
				return s, skipf("POST /oauth/introspect: %d (not in this binary)", resp.StatusCode)
			}
			var out struct {
				Active bool `json:"active"`
			}
			if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || !out.Active {
				return s, fmt.Errorf("POST /oauth/introspect: %d %s; want 200 with active true", resp.StatusCode, strings.TrimSpace(string(b)))
			}
			return s, nil
		},
		func(_ int, s introspection) (*http.Request, error) { return s.request() },
		nil)
}

func (s introspection) request() (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(s.body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+s.caller)
	return req, nil
}
