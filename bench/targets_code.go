package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

const (
	// codeExchanges is how many authorization codes are minted before the
	// timer: each is single use, so the target is finite (about 6 s at
	// 2,000/s).
	codeExchanges = 12_000
	// codeMintBatch codes are minted at a time; no new batch starts once
	// codeMintBudget has passed, so that every code (60 s of life) is
	// still live when the run ends.
	codeMintBatch  = 500
	codeMintBudget = 30 * time.Second
	codeWarm       = 200
	codeRedirect   = "https://rp.example.com/callback"
	// codeVerifier is the PKCE verifier of every code (RFC 7636: 43 to
	// 128 unreserved characters); one verifier costs the server what a
	// verifier per code would.
	codeVerifier = "bench-pkce-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
)

// codes is the code target's state: one token request body per minted
// code, taken in order.
type codes struct {
	url      string
	bodies   [][]byte
	warm     int
	next     atomic.Int64
	minted   time.Time // when the first code was minted
	mintTook time.Duration
}

func (s *codes) notes() (info, problems []string) {
	used := min(int(s.next.Load()), len(s.bodies))
	info = []string{fmt.Sprintf("%d codes minted beforehand in %v (GET /oauth/authorize of a first-party workspace application, signed-in browser); %d exchanged in an untimed warm-up, %d during the run; the first code was %.0f s old at the end (a code lives 60 s)",
		len(s.bodies), s.mintTook.Round(100*time.Millisecond), s.warm, used-s.warm, time.Since(s.minted).Seconds())}
	if time.Since(s.minted) > 55*time.Second {
		problems = append(problems, "some codes may have expired before they were exchanged")
	}
	return info, problems
}

// codeTarget measures "POST /oauth/token" with grant_type
// authorization_code for a public workspace application (PKCE, scope
// openid), each answer carrying an RS256 ID token. The codes are minted
// before the timer by the bench user's signed-in browser at
// "GET /oauth/authorize" (the application is first party, so the answer
// is the redirect with the code, no consent page); only the exchanges are
// timed.
func codeTarget() target {
	t := newTarget("code", setupCodes,
		func(_ int, s *codes) (*http.Request, error) {
			i := s.next.Add(1) - 1
			if i >= int64(len(s.bodies)) {
				return nil, errExhausted
			}
			return formRequest(s.url, s.bodies[i])
		}, nil)
	t.finite = true
	return t
}

// setupCodes registers a public first-party application in a new team
// workspace of the bench user, signs the user in on the hosted page,
// mints the codes in batches, checks one exchange's ID token and
// exchanges a few more untimed.
func setupCodes(ctx context.Context, e *env) (*codes, error) {
	var org struct {
		AccessToken string `json:"access_token"`
		Org         struct {
			ID string `json:"id"`
		} `json:"org"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs", e.user.session.AccessToken,
		map[string]string{"name": "Bench Code"}, &org); err != nil {
		return nil, err
	}
	var app struct {
		Application struct {
			ClientID string `json:"client_id"`
		} `json:"application"`
	}
	err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org.Org.ID+"/applications", org.AccessToken,
		map[string]any{"client_name": "Bench RP", "redirect_uris": []string{codeRedirect},
			"token_endpoint_auth_method": "none", "first_party": true, "scope": "openid profile email"}, &app)
	if why, ok := missingRoute(err); ok {
		return nil, skipf("%s: workspace applications are not in this build", why)
	}
	if err != nil {
		return nil, err
	}
	cookie, err := browserSession(ctx, e)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(codeVerifier))
	authURL := e.baseURL + "/oauth/authorize?" + url.Values{
		"response_type": {"code"}, "client_id": {app.Application.ClientID}, "redirect_uri": {codeRedirect},
		"scope": {"openid"}, "state": {"bench"}, "nonce": {"bench-nonce"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}.Encode()

	s := &codes{url: e.baseURL + "/oauth/token", minted: time.Now()}
	e.logf("minting up to %d authorization codes, %d at a time", codeExchanges, codeMintBatch)
	for len(s.bodies) < codeExchanges && time.Since(s.minted) < codeMintBudget {
		batch := make([][]byte, min(codeMintBatch, codeExchanges-len(s.bodies)))
		err := parallel(ctx, len(batch), 8, func(i int) error {
			code, err := mintCode(ctx, e.client, authURL, cookie)
			batch[i] = []byte(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {codeRedirect},
				"client_id": {app.Application.ClientID}, "code_verifier": {codeVerifier}}.Encode())
			return err
		})
		if err != nil {
			return nil, err
		}
		s.bodies = append(s.bodies, batch...)
	}
	s.mintTook = time.Since(s.minted)
	e.logf("minted %d codes in %v", len(s.bodies), s.mintTook.Round(100*time.Millisecond))
	if len(s.bodies) <= codeWarm {
		return nil, fmt.Errorf("minted only %d codes in %v", len(s.bodies), codeMintBudget)
	}

	// One exchange checked in full, then an untimed warm-up.
	if err := checkExchange(ctx, e.client, s.url, s.bodies[0]); err != nil {
		return nil, err
	}
	s.warm = codeWarm
	warm := newClient(e.workers, time.Minute)
	defer warm.CloseIdleConnections()
	err = parallel(ctx, s.warm-1, e.workers, func(i int) error {
		req, err := formRequest(s.url, s.bodies[1+i])
		if err != nil {
			return err
		}
		res, err := warm.Do(req.WithContext(ctx))
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("warm-up code exchange: status %d", res.StatusCode)
		}
		return nil
	})
	s.next.Store(int64(s.warm))
	return s, err
}

// mintCode opens the authorization URL in the signed-in browser and
// returns the code of the redirect to the client.
func mintCode(ctx context.Context, client *http.Client, authURL, cookie string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Cookie", cookie)
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	res.Body.Close()
	to, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(to.String(), codeRedirect+"?") || to.Query().Get("code") == "" {
		return "", fmt.Errorf("GET /oauth/authorize: %d to %q (%.200s); want 303 to the client with a code", res.StatusCode, res.Header.Get("Location"), b)
	}
	return to.Query().Get("code"), nil
}

// checkExchange exchanges one code and checks the answer: 200 with an
// access token and an RS256 ID token.
func checkExchange(ctx context.Context, client *http.Client, tokenURL string, body []byte) error {
	req, err := formRequest(tokenURL, body)
	if err != nil {
		return err
	}
	res, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var out struct {
		AccessToken string `json:"access_token"`
		IDToken     string `json:"id_token"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.AccessToken == "" || out.IDToken == "" {
		return fmt.Errorf("POST /oauth/token (authorization_code): %d %s; want 200 with access_token and id_token", res.StatusCode, strings.TrimSpace(string(b)))
	}
	head, _, _ := strings.Cut(out.IDToken, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		Alg string `json:"alg"`
	}
	if err != nil || json.Unmarshal(raw, &h) != nil || h.Alg != "RS256" {
		return fmt.Errorf("ID token header %q: want alg RS256", raw)
	}
	return nil
}

// formRequest is a POST of a form-encoded body, built once per measured request.
func formRequest(url string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req, nil
}
