package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync/atomic"
)

// scimLookupUsers is how many directory users the scim_lookup target's
// workspace holds (issue 28: p99 under 20 ms at 100,000).
const scimLookupUsers = 100_000

// scimOrg seeds a team org the bench user owns, whose domain is verified
// (so a SCIM create makes an account and a membership, the full path),
// and returns the org, the domain and a SCIM token of it.
func scimOrg(ctx context.Context, e *env, s *seedDB, tag string) (org, domain, token string, err error) {
	org, domain, now := newUUID(), "bench-"+tag+"-"+randomHex(4)+".example", nowMicros()
	if err := s.insert(ctx, "orgs", orgCols, [][]any{teamOrgRow(org, "Bench SCIM "+tag, "bench-scim-"+tag+"-"+randomHex(4), now)}); err != nil {
		return "", "", "", err
	}
	if err := s.exec(ctx, `INSERT INTO memberships (org_id, user_id, role, joined_at) VALUES ($1, $2, 'owner', $3)`, org, e.user.session.User.ID, now); err != nil {
		return "", "", "", err
	}
	if err := s.exec(ctx, `INSERT INTO domains (id, org_id, domain, mode, token, verified_at, created_at) VALUES ($1, $2, $3, 'suggest', $4, $5, $5)`,
		newUUID(), org, domain, randomHex(16), now); err != nil {
		return "", "", "", err
	}
	// A token needs a recent sign-in: a fresh one, not registration's.
	sess, err := login(ctx, e.client, e.baseURL, e.user)
	if err != nil {
		return "", "", "", err
	}
	var out struct {
		Token struct {
			Token string `json:"token"`
		} `json:"scim_token"`
	}
	if err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/v1/orgs/"+org+"/scim-tokens", sess.AccessToken, map[string]string{"name": "bench"}, &out); err != nil {
		if why, ok := missingRoute(err); ok {
			return "", "", "", skipf("%s: SCIM is not in this build", why)
		}
		return "", "", "", err
	}
	return org, domain, out.Token.Token, nil
}

// scimCreate is the scim_create target's state: each request provisions
// a new address of the verified domain.
type scimCreate struct {
	url, token, domain string
	n                  atomic.Int64
}

// scimCreateTarget measures "POST /scim/v2/Users" as Okta sends it: a new
// account, its membership with the provisioning role, and the audit
// entries, in one transaction (issue 28: 1,000/s on SQLite).
func scimCreateTarget() target {
	return newTarget("scim_create",
		func(ctx context.Context, e *env) (*scimCreate, error) {
			s, err := openSeedDB(ctx, e.db)
			if err != nil {
				return nil, err
			}
			defer s.Close()
			_, domain, token, err := scimOrg(ctx, e, s, "create")
			return &scimCreate{url: e.baseURL + "/scim/v2/Users", token: token, domain: domain}, err
		},
		func(_ int, s *scimCreate) (*http.Request, error) {
			i := s.n.Add(1)
			email := fmt.Sprintf("user%d@%s", i, s.domain)
			body, err := json.Marshal(map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"},
				"userName": email, "externalId": fmt.Sprintf("00u%d", i), "active": true, "displayName": fmt.Sprintf("Bench User %d", i),
				"name":   map[string]string{"givenName": "Bench", "familyName": fmt.Sprintf("User %d", i)},
				"emails": []map[string]any{{"primary": true, "value": email, "type": "work"}}})
			if err != nil {
				return nil, err
			}
			req, err := postJSON(s.url, body)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+s.token)
				req.Header.Set("Content-Type", "application/scim+json")
			}
			return req, err
		},
		nil)
}

// scimLookup is the scim_lookup target's state.
type scimLookup struct{ url, token, domain string }

// scimLookupTarget measures Okta's and Entra's lookup before each create,
// `GET /scim/v2/Users?filter=userName eq "…"`, in a workspace of
// scimLookupUsers directory users seeded in the database (issue 28: p99
// under 20 ms on both databases).
func scimLookupTarget() target {
	return newTarget("scim_lookup",
		func(ctx context.Context, e *env) (*scimLookup, error) {
			s, err := openSeedDB(ctx, e.db)
			if err != nil {
				return nil, err
			}
			defer s.Close()
			org, domain, token, err := scimOrg(ctx, e, s, "lookup")
			if err != nil {
				return nil, err
			}
			e.logf("seeding %d SCIM directory users", scimLookupUsers)
			if err := s.seedDirUsers(ctx, org, domain, scimLookupUsers); err != nil {
				return nil, fmt.Errorf("seed directory users: %w", err)
			}
			l := &scimLookup{url: e.baseURL + "/scim/v2/Users", token: token, domain: domain}
			var out struct {
				Total int `json:"totalResults"`
			}
			req, _ := l.request()
			if err := callAs(ctx, e.client, http.MethodGet, req.URL.String(), token, nil, &out); err != nil || out.Total != 1 {
				return nil, fmt.Errorf("lookup of a seeded user: %d results, %v; want 1", out.Total, err)
			}
			return l, nil
		},
		func(_ int, l *scimLookup) (*http.Request, error) { return l.request() },
		nil)
}

// request looks up one of the seeded users at random.
func (l *scimLookup) request() (*http.Request, error) {
	f := fmt.Sprintf(`userName eq "user%d@%s"`, rand.IntN(scimLookupUsers), l.domain)
	return getBearer(l.url+"?filter="+url.QueryEscape(f), l.token)
}

// seedDirUsers inserts n pending directory users of org (user<i>@domain,
// ids derived from org's)
// with one INSERT … SELECT computed inside the database, then analyzes the
// table so the planner sees its size.
func (s *seedDB) seedDirUsers(ctx context.Context, org, domain string, n int) error {
	cols := `INSERT INTO scim_users (id, org_id, user_name, user_name_key, external_id, display_name, active, user_id, resource, created_at, updated_at)`
	if s.pg != nil {
		q := cols + ` SELECT substr($1, 1, 23) || '-' || lpad(to_hex(i), 12, '0'), $1,
			'user' || i || '@' || $2, 'user' || i || '@' || $2, '00u' || i, 'Bench User ' || i, TRUE, NULL,
			'{"name":{"givenName":"Bench"}}', $3::bigint + i, $3::bigint + i
			FROM generate_series(0::bigint, $4::bigint - 1) AS i`
		if err := s.exec(ctx, q, org, domain, nowMicros(), n); err != nil {
			return err
		}
		return s.exec(ctx, `ANALYZE scim_users`)
	}
	q := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < $4) ` + cols + `
		SELECT printf('%s-%012x', substr($1, 1, 23), i), $1, 'user' || i || '@' || $2, 'user' || i || '@' || $2, '00u' || i, 'Bench User ' || i, 1, NULL,
			'{"name":{"givenName":"Bench"}}', $3 + i, $3 + i FROM s`
	if err := s.exec(ctx, q, org, domain, nowMicros(), n); err != nil {
		return err
	}
	return s.exec(ctx, `ANALYZE scim_users`)
}
