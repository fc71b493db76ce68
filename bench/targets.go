package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
)

// env is what a target's setup gets: the server under test and a user
// registered on it.
type env struct {
	client  *http.Client // for setup calls, not the measured ones
	baseURL string       // e.g. http://127.0.0.1:41234, no trailing slash
	workers int          // how many workers will call request
	user    *benchUser   // nil for the baseline
	// db is the database the server runs on, for targets that seed rows
	// directly; nil for a server the bench did not start (-url).
	db          *dbInfo
	myOrgs      int // orgs the myorgs user belongs to
	inviteUsers int // fresh users for invite_accept
	mfaUsers    int // fresh users with a TOTP factor for totp_step
	logf        func(format string, args ...any)
}

// benchUser is the account the targets act as.
type benchUser struct {
	email    string
	password string
	session  session // from registration
}

// session is the part of the Session record the targets use.
type session struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	User         struct {
		ID string `json:"id"`
	} `json:"user"`
	Org struct {
		ID string `json:"id"`
	} `json:"org"`
}

// target is one thing to measure. A new endpoint is one call to newTarget:
// a setup that prepares state once, a request built per call from that
// state, and optionally a hook that reads each answer (for request chains).
type target struct {
	name  string
	setup func(ctx context.Context, e *env) (*runner, error)
	// finite: each request uses up some prepared state, and the request
	// function returns errExhausted when none is left. Such a target gets
	// no timed warm-up (its setup warms up) and ends when it runs dry.
	finite bool
}

// runner is a prepared target: what the load loop calls.
type runner struct {
	request    func(worker int) (*http.Request, error)
	onResponse func(worker, status int, body []byte) // nil: bodies are discarded
	notes      func() (info, problems []string)      // nil, or remarks for the report after the run
	// redirect, when set, is a redirect status that answers a request
	// well (a browser form post answered 303); other non-2xx are errors.
	redirect int
}

func (r *runner) wantsBody() bool { return r.onResponse != nil }

// ok reports whether status answers a request well.
func (r *runner) ok(status int) bool {
	return (status >= 200 && status <= 299) || (r.redirect != 0 && status == r.redirect)
}

func (r *runner) response(worker, status int, body []byte) {
	if r.onResponse != nil {
		r.onResponse(worker, status, body)
	}
}

// noter is state that has remarks for the report once the run is over.
type noter interface {
	notes() (info, problems []string)
}

// newTarget builds a target from typed functions. request is called from
// many workers at once and must only read the shared state; onResponse
// (may be nil) is called by worker w with every answer to w's requests, so
// it may write state that belongs to w alone.
func newTarget[S any](
	name string,
	setup func(ctx context.Context, e *env) (S, error),
	request func(worker int, s S) (*http.Request, error),
	onResponse func(worker int, s S, status int, body []byte),
) target {
	return target{name: name, setup: func(ctx context.Context, e *env) (*runner, error) {
		s, err := setup(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("set up %s: %w", name, err)
		}
		r := &runner{request: func(w int) (*http.Request, error) { return request(w, s) }}
		if onResponse != nil {
			r.onResponse = func(w, status int, body []byte) { onResponse(w, s, status, body) }
		}
		if n, ok := any(s).(noter); ok {
			r.notes = n.notes
		}
		return r, nil
	}}
}

// targets lists every target in the order they run. The baseline runs on
// the bare server, the others on each gatehouse; the "flood" target is
// login again at -flood connections.
func targets() []target {
	return []target{
		baselineTarget(),
		verifyTarget(),
		introspectTarget(),
		tasksIssuesTarget(),
		mcpCallTarget(),
		mcpStatelessTarget(),
		loginTarget(),
		registerTarget(),
		passkeyTarget(),
		refreshTarget(),
		exchangeTarget(),
		codeTarget(),
		idjagTarget(),
		samlACSTarget(),
		linkGetTarget(),
		myOrgsTarget(),
		membersTarget("members50", 50),
		membersTarget("members10k", 10_000),
		inviteAcceptTarget(),
		totpStepTarget(),
		auditTarget("audit", ""),
		auditTarget("audit_tool", "&tool=tasks"),
		signInPageTarget(),
		consoleHomeTarget(),
		membersPageTarget("members_page", false),
		membersPageTarget("members_search", true),
		scimCreateTarget(),
		scimLookupTarget(),
	}
}

// targetNames returns what -targets accepts.
func targetNames() []string {
	var names []string
	for _, t := range targets() {
		names = append(names, t.name)
	}
	return append(names, "flood")
}

// slowTargets are left out of the default -targets: they seed millions of
// rows first ("-targets audit" runs both; scim_lookup seeds 100,000
// directory users), or sign thousands of users in twice each (totp_step:
// "-targets totp_step"), or sign up a new account per request (register:
// "-targets register").
var slowTargets = []string{"audit", "audit_tool", "totp_step", "scim_lookup", "register"}

// defaultTargets is every target but the slow ones.
func defaultTargets() []string {
	var names []string
	for _, n := range targetNames() {
		if !slices.Contains(slowTargets, n) {
			names = append(names, n)
		}
	}
	return names
}

// bearer is the state of a target that calls one URL with the user's token.
type bearer struct{ url, token string }

// baselineTarget measures the bare net/http server (see baseline.go).
func baselineTarget() target {
	return newTarget("baseline",
		func(_ context.Context, e *env) (bearer, error) {
			return bearer{e.baseURL + "/v1/auth/verify", "baseline-token"}, nil
		},
		func(_ int, s bearer) (*http.Request, error) { return getBearer(s.url, s.token) },
		nil)
}

// verifyTarget measures "GET /v1/auth/verify" with a valid access token.
func verifyTarget() target {
	return newTarget("verify",
		func(_ context.Context, e *env) (bearer, error) {
			return bearer{e.baseURL + "/v1/auth/verify", e.user.session.AccessToken}, nil
		},
		func(_ int, s bearer) (*http.Request, error) { return getBearer(s.url, s.token) },
		nil)
}

// post is the state of a target that posts one fixed JSON body.
type post struct {
	url  string
	body []byte
}

// loginTarget measures "POST /v1/auth/login" with the user's password.
func loginTarget() target {
	return newTarget("login",
		func(_ context.Context, e *env) (post, error) {
			body, err := json.Marshal(map[string]string{"email": e.user.email, "password": e.user.password})
			return post{e.baseURL + "/v1/auth/login", body}, err
		},
		func(_ int, s post) (*http.Request, error) { return postJSON(s.url, s.body) },
		nil)
}

// refreshChains is the refresh target's state: each worker owns one
// chain of refresh tokens, since each refresh revokes the token presented.
type refreshChains struct {
	e      *env
	ctx    context.Context
	url    string
	tokens []string // tokens[w] is written by worker w only
	broken []bool   // the last refresh of worker w failed
}

// refreshTarget measures "POST /v1/auth/refresh", each worker presenting
// the refresh token the previous answer gave it.
func refreshTarget() target {
	return newTarget("refresh",
		func(ctx context.Context, e *env) (*refreshChains, error) {
			c := &refreshChains{e: e, ctx: ctx, url: e.baseURL + "/v1/auth/refresh",
				tokens: make([]string, e.workers), broken: make([]bool, e.workers)}
			// One sign-in per worker, a few at a time: each is a password hash.
			err := parallel(ctx, e.workers, 4, func(w int) error {
				s, err := login(ctx, e.client, e.baseURL, e.user)
				c.tokens[w] = s.RefreshToken
				return err
			})
			return c, err
		},
		func(w int, c *refreshChains) (*http.Request, error) {
			if c.broken[w] {
				// Start a new chain so one failure does not turn every
				// later request of this worker into a fast 401. The
				// sign-in is not timed, but the failure was counted.
				s, err := login(c.ctx, c.e.client, c.e.baseURL, c.e.user)
				if err != nil {
					return nil, fmt.Errorf("restart refresh chain: %w", err)
				}
				c.tokens[w], c.broken[w] = s.RefreshToken, false
			}
			body, err := json.Marshal(map[string]string{"refresh_token": c.tokens[w]})
			if err != nil {
				return nil, err
			}
			return postJSON(c.url, body)
		},
		func(w int, c *refreshChains, status int, body []byte) {
			var s session
			if status/100 != 2 || json.Unmarshal(body, &s) != nil || s.RefreshToken == "" {
				c.broken[w] = true
				return
			}
			c.tokens[w] = s.RefreshToken
		})
}

func getBearer(url, token string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req, nil
}

func postJSON(url string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// callJSON sends one setup request without a token (see callAs).
func callJSON(ctx context.Context, client *http.Client, method, url string, in, out any) error {
	return callAs(ctx, client, method, url, "", in, out)
}

// register creates the bench user and keeps its session.
func register(ctx context.Context, client *http.Client, baseURL string, u *benchUser) error {
	in := map[string]string{"email": u.email, "password": u.password, "name": "Bench User"}
	if err := callJSON(ctx, client, http.MethodPost, baseURL+"/v1/auth/register", in, &u.session); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if u.session.AccessToken == "" || u.session.RefreshToken == "" {
		return fmt.Errorf("register: session without access_token or refresh_token")
	}
	return nil
}

// login signs the bench user in once.
func login(ctx context.Context, client *http.Client, baseURL string, u *benchUser) (session, error) {
	var s session
	in := map[string]string{"email": u.email, "password": u.password}
	if err := callJSON(ctx, client, http.MethodPost, baseURL+"/v1/auth/login", in, &s); err != nil {
		return s, fmt.Errorf("login: %w", err)
	}
	if s.RefreshToken == "" {
		return s, fmt.Errorf("login: session without refresh_token")
	}
	return s, nil
}

// parallel calls f(0..n-1) with at most width calls at a time and returns
// the first error.
func parallel(ctx context.Context, n, width int, f func(i int) error) error {
	sem := make(chan struct{}, width)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f(i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
