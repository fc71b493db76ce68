package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// The workspace targets: API-key exchange, the workspace list, the member
// directory, invitation accept and the audit log. Rows too many to create
// through the API (orgs, users, memberships, audit entries) are inserted
// into the server's database directly (seed.go).

// exchangeTarget measures "POST /v1/auth/token" with a user API key.
func exchangeTarget() target {
	return newTarget("exchange",
		func(ctx context.Context, e *env) (post, error) {
			var out struct {
				APIKey struct {
					Secret string `json:"secret"`
				} `json:"api_key"`
			}
			if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/me/api-keys", e.user.session.AccessToken,
				map[string]string{"name": "bench"}, &out); err != nil {
				return post{}, err
			}
			if out.APIKey.Secret == "" {
				return post{}, errors.New("POST /v1/me/api-keys: no api_key.secret in the answer")
			}
			body, err := json.Marshal(map[string]string{"api_key": out.APIKey.Secret})
			if err != nil {
				return post{}, err
			}
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/auth/token", "", json.RawMessage(body), &tok); err != nil {
				return post{}, err
			}
			if tok.AccessToken == "" {
				return post{}, errors.New("POST /v1/auth/token: no access_token in the answer")
			}
			return post{e.baseURL + "/v1/auth/token", body}, nil
		},
		func(_ int, s post) (*http.Request, error) { return postJSON(s.url, s.body) },
		nil)
}

// myOrgsTarget measures "GET /v1/me/orgs" for a user who belongs to
// -myorgs orgs: the personal org plus team orgs seeded in the database,
// each with a few other members.
func myOrgsTarget() target {
	return newTarget("myorgs",
		func(ctx context.Context, e *env) (bearer, error) {
			u := bearer{e.baseURL + "/v1/me/orgs", e.user.session.AccessToken}
			have, err := myOrgCount(ctx, e)
			if err != nil {
				return u, err
			}
			want := e.myOrgs
			if have < want {
				s, err := openSeedDB(ctx, e.db)
				if err != nil {
					return u, err
				}
				defer s.Close()
				if err := seedTeamOrgs(ctx, s, e.user.session.User.ID, want-have); err != nil {
					return u, err
				}
			}
			if have, err = myOrgCount(ctx, e); err != nil {
				return u, err
			}
			if have != want {
				return u, fmt.Errorf("GET /v1/me/orgs lists %d orgs after seeding, want %d", have, want)
			}
			return u, nil
		},
		func(_ int, s bearer) (*http.Request, error) { return getBearer(s.url, s.token) },
		nil)
}

func myOrgCount(ctx context.Context, e *env) (int, error) {
	var out struct {
		Orgs []json.RawMessage `json:"orgs"`
	}
	err := callAs(ctx, e.client, http.MethodGet, e.baseURL+"/v1/me/orgs", e.user.session.AccessToken, nil, &out)
	return len(out.Orgs), err
}

// seedTeamOrgs makes userID a member of n new team orgs, each with 2 to 9
// of 20 other users as members too.
func seedTeamOrgs(ctx context.Context, s *seedDB, userID string, n int) error {
	tag := randomHex(4)
	others, err := s.seedUsers(ctx, "filler-"+tag, 20)
	if err != nil {
		return err
	}
	now := nowMicros()
	var orgs, members [][]any
	for i := range n {
		id := newUUID()
		created := now - int64(n-i)*1000
		orgs = append(orgs, teamOrgRow(id, fmt.Sprintf("Bench Team %d", i), fmt.Sprintf("bench-team-%s-%d", tag, i), created))
		members = append(members, []any{id, userID, "member", created + 1})
		for j := range 2 + i%8 {
			members = append(members, []any{id, others[(i+j)%len(others)], "member", created + 2 + int64(j)})
		}
	}
	if err := s.insert(ctx, "orgs", orgCols, orgs); err != nil {
		return err
	}
	return s.insert(ctx, "memberships", memberCols, members)
}

// membersTarget measures "GET /v1/orgs/{id}/members" on a team org of n
// members (the bench user its owner, the others seeded users).
func membersTarget(name string, n int) target {
	return newTarget(name,
		func(ctx context.Context, e *env) (bearer, error) {
			token := e.user.session.AccessToken
			// A missing route answers 404 or 405 from the mux, not the
			// service's JSON 404 for an unknown org.
			if err := callAs(ctx, e.client, http.MethodGet, e.baseURL+"/v1/orgs/"+newUUID()+"/members", token, nil, nil); err != nil {
				if why, ok := missingRoute(err); ok {
					return bearer{}, skipf("%s: the organizations API is not in this build", why)
				}
			}
			orgID, err := seedMembersOrg(ctx, e, n)
			if err != nil {
				return bearer{}, err
			}
			u := bearer{e.baseURL + "/v1/orgs/" + orgID + "/members", token}
			var out struct {
				Members []json.RawMessage `json:"members"`
			}
			if err := callAs(ctx, e.client, http.MethodGet, u.url, token, nil, &out); err != nil {
				return u, err
			}
			if len(out.Members) != n {
				return u, fmt.Errorf("GET /v1/orgs/{id}/members lists %d members, want %d", len(out.Members), n)
			}
			return u, nil
		},
		func(_ int, s bearer) (*http.Request, error) { return getBearer(s.url, s.token) },
		nil)
}

// seedMembersOrg inserts a team org of n members: the bench user its owner,
// the others seeded users (one in 25 an admin).
func seedMembersOrg(ctx context.Context, e *env, n int) (string, error) {
	s, err := openSeedDB(ctx, e.db)
	if err != nil {
		return "", err
	}
	defer s.Close()
	orgID := newUUID()
	now := nowMicros()
	if err := s.insert(ctx, "orgs", orgCols, [][]any{teamOrgRow(orgID, fmt.Sprintf("Bench %d Members", n), "bench-members-"+randomHex(4), now-int64(n)-10)}); err != nil {
		return "", err
	}
	ids, err := s.seedUsers(ctx, fmt.Sprintf("m%d-%s", n, randomHex(3)), n-1)
	if err != nil {
		return "", err
	}
	rows := [][]any{{orgID, e.user.session.User.ID, "owner", now - int64(n) - 5}}
	for i, id := range ids {
		role := "member"
		if i%25 == 0 {
			role = "admin"
		}
		rows = append(rows, []any{orgID, id, role, now - int64(n) + int64(i)})
	}
	if err := s.insert(ctx, "memberships", memberCols, rows); err != nil {
		return "", err
	}
	return orgID, nil
}

// invites is the invite_accept target's state: one link invitation and
// fresh users, each of whom accepts it once.
type invites struct {
	url     string   // POST here to accept
	tokens  []string // access tokens of users who are not members yet
	warm    int      // how many of them accepted during the warm-up
	next    atomic.Int64
	already atomic.Int64 // answers with already_member true: none expected
	bad     atomic.Int64 // 2xx answers that did not decode
}

func (s *invites) notes() (info, problems []string) {
	used := min(int(s.next.Load()), len(s.tokens))
	info = []string{fmt.Sprintf("%d fresh users registered beforehand; %d of them accepted in an untimed warm-up, %d more during the run", len(s.tokens), s.warm, used-s.warm)}
	if a := s.already.Load(); a > 0 {
		problems = append(problems, fmt.Sprintf("%d accepts answered already_member=true (each user accepts once)", a))
	}
	if b := s.bad.Load(); b > 0 {
		problems = append(problems, fmt.Sprintf("%d 2xx answers had no already_member field", b))
	}
	return info, problems
}

// inviteAcceptTarget measures "POST /v1/invitations/{token}/accept" of one
// link invitation, each request by a distinct user registered (through the
// API, before the timer) for the purpose. It ends when they run out.
func inviteAcceptTarget() target {
	t := newTarget("invite_accept",
		setupInvites,
		func(_ int, s *invites) (*http.Request, error) {
			i := s.next.Add(1) - 1
			if i >= int64(len(s.tokens)) {
				return nil, errExhausted
			}
			req, err := http.NewRequest(http.MethodPost, s.url, nil)
			if err != nil {
				return nil, err
			}
			req.Header.Set("Authorization", "Bearer "+s.tokens[i])
			return req, nil
		},
		func(_ int, s *invites, status int, body []byte) {
			if status/100 != 2 {
				return
			}
			var a struct {
				AlreadyMember *bool `json:"already_member"`
			}
			switch {
			case json.Unmarshal(body, &a) != nil || a.AlreadyMember == nil:
				s.bad.Add(1)
			case *a.AlreadyMember:
				s.already.Add(1)
			}
		})
	t.finite = true
	return t
}

// setupInvites makes an org and a link invitation to it, registers the users
// who will accept it and lets the first of them accept, untimed.
func setupInvites(ctx context.Context, e *env) (*invites, error) {
	token := e.user.session.AccessToken
	var org struct {
		Org struct {
			ID string `json:"id"`
		} `json:"org"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs", token, map[string]string{"name": "Bench Org"}, &org); err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: the organizations API is not in this build", why)
		}
		return nil, err
	}
	var inv struct {
		Invitation struct {
			URL string `json:"url"`
		} `json:"invitation"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org.Org.ID+"/invitations", token, map[string]string{"kind": "link"}, &inv); err != nil {
		if why, ok := missingRoute(err); ok {
			return nil, skipf("%s: invitations are not in this build", why)
		}
		return nil, err
	}
	u, err := url.Parse(inv.Invitation.URL)
	if err != nil || u.Query().Get("token") == "" {
		return nil, fmt.Errorf("invitation url %q has no token parameter", inv.Invitation.URL)
	}
	s := &invites{url: e.baseURL + "/v1/invitations/" + url.PathEscape(u.Query().Get("token")) + "/accept",
		tokens: make([]string, e.inviteUsers)}
	// Registration hashes a password (~25 ms of one core), so this
	// takes a while; a few at a time keep the hasher busy.
	e.logf("registering %d users for invite_accept", e.inviteUsers)
	began := time.Now()
	pw := "pw-" + randomHex(10)
	tag := randomHex(4)
	err = parallel(ctx, e.inviteUsers, 8, func(i int) error {
		bu := &benchUser{email: fmt.Sprintf("bench-inv-%s-%d@example.com", tag, i), password: pw}
		if err := register(ctx, e.client, e.baseURL, bu); err != nil {
			return err
		}
		s.tokens[i] = bu.session.AccessToken
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.logf("registered %d users in %v", e.inviteUsers, time.Since(began).Round(100*time.Millisecond))
	// Warm up with the first users, untimed (the load loop's warm-up
	// is by time, and at over 1,000/s it would use them all up).
	s.warm = min(e.inviteUsers/10, 200)
	warm := newClient(e.workers, time.Minute)
	defer warm.CloseIdleConnections()
	err = parallel(ctx, s.warm, e.workers, func(i int) error {
		return callAs(ctx, warm, http.MethodPost, s.url, s.tokens[i], nil, nil)
	})
	s.next.Store(int64(s.warm))
	return s, err
}

// auditTarget measures "GET /v1/orgs/{id}/audit?limit=100" plus query on
// the org whose log was seeded before the server started.
func auditTarget(name, query string) target {
	return newTarget(name,
		func(ctx context.Context, e *env) (bearer, error) {
			if e.db == nil || e.db.audit == nil {
				return bearer{}, skipf("needs the audit log seeded before the server starts (not available with -url)")
			}
			a := e.db.audit
			s, err := openSeedDB(ctx, e.db)
			if err != nil {
				return bearer{}, err
			}
			defer s.Close()
			// The caller needs org.settings.manage: make the bench user the
			// audited org's owner.
			if err := s.exec(ctx, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', $3) ON CONFLICT DO NOTHING`,
				a.orgID, e.user.session.User.ID, nowMicros()); err != nil {
				return bearer{}, err
			}
			u := bearer{e.baseURL + "/v1/orgs/" + a.orgID + "/audit?limit=100" + query, e.user.session.AccessToken}
			var out struct {
				Entries []struct {
					Tool string `json:"tool"`
				} `json:"entries"`
				Tools []string `json:"tools"`
			}
			if err := callAs(ctx, e.client, http.MethodGet, u.url, u.token, nil, &out); err != nil {
				if why, ok := missingRoute(err); ok {
					return u, skipf("%s: the audit API is not in this build", why)
				}
				return u, err
			}
			if len(out.Entries) != 100 || len(out.Tools) != len(auditTools) {
				return u, fmt.Errorf("GET %s: %d entries and %d tools, want 100 and %d", u.url, len(out.Entries), len(out.Tools), len(auditTools))
			}
			return u, nil
		},
		func(_ int, s bearer) (*http.Request, error) { return getBearer(s.url, s.token) },
		nil)
}

// httpError is a non-2xx answer to a setup call.
type httpError struct {
	method, url string
	status      int
	body        []byte
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.url, e.status, snippet(e.body))
}

// missingRoute reports whether err is the mux's answer for a route it does
// not have: 405, or a 404 that is not the service's JSON error record.
func missingRoute(err error) (string, bool) {
	var h *httpError
	if !errors.As(err, &h) {
		return "", false
	}
	if h.status == http.StatusMethodNotAllowed || h.status == http.StatusNotFound && !json.Valid(h.body) {
		u, _ := url.Parse(h.url)
		return fmt.Sprintf("%s %s answered %d %q", h.method, u.Path, h.status, snippet(h.body)), true
	}
	return "", false
}

// callAs sends one setup request with a bearer token (none if empty) and
// decodes a 2xx answer into out; a non-2xx answer is an *httpError. in
// may be a json.RawMessage.
func callAs(ctx context.Context, client *http.Client, method, url, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, url, err)
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{method, url, resp.StatusCode, b}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, url, err)
		}
	}
	return nil
}
