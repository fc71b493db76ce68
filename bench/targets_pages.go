package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// page is the state of a target that opens one hosted page, with the
// browser session's cookie when there is one.
type page struct {
	url, cookie string
}

// signInPageTarget measures "GET /signin" for an anonymous browser.
func signInPageTarget() target {
	return newTarget("signin_page",
		func(_ context.Context, e *env) (page, error) { return page{url: e.baseURL + "/signin"}, nil },
		func(_ int, s page) (*http.Request, error) { return getPage(s) },
		nil)
}

// consoleHomeTarget measures "GET /" for a signed-in browser: the session
// cookie resolved, the principal, the workspaces listed, the page rendered.
func consoleHomeTarget() target {
	return newTarget("console_home",
		func(ctx context.Context, e *env) (page, error) {
			cookie, err := browserSession(ctx, e)
			return page{url: e.baseURL + "/", cookie: cookie}, err
		},
		func(_ int, s page) (*http.Request, error) { return getPage(s) },
		nil)
}

// browserSession signs the bench user in on the hosted sign-in form and
// returns the Cookie header of the browser session it starts.
func browserSession(ctx context.Context, e *env) (string, error) {
	form := url.Values{"email": {e.user.email}, "password": {e.user.password}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.baseURL+"/signin", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := *e.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	var parts []string
	for _, ck := range res.Cookies() {
		if ck.Value != "" {
			parts = append(parts, ck.Name+"="+ck.Value)
		}
	}
	if res.StatusCode != http.StatusSeeOther || len(parts) == 0 {
		return "", fmt.Errorf("sign-in form: %d with %d cookies; want 303 and the session cookie", res.StatusCode, len(parts))
	}
	return strings.Join(parts, "; "), nil
}

func getPage(s page) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	if s.cookie != "" {
		req.Header.Set("Cookie", s.cookie)
	}
	return req, nil
}

// membersPageTarget measures the console's members directory of a
// 10,000-member workspace for its owner's browser, answered by the store:
// pages spread over the directory (LIMIT/OFFSET) or, with search, a search
// for a few digits (LIKE over every member).
func membersPageTarget(name string, search bool) target {
	var n atomic.Int64 // requests so far, to vary the page and the search
	return newTarget(name,
		func(ctx context.Context, e *env) (page, error) {
			orgID, err := seedMembersOrg(ctx, e, 10_000)
			if err != nil {
				return page{}, err
			}
			cookie, err := browserSession(ctx, e)
			return page{url: e.baseURL + "/workspaces/" + orgID + "/members", cookie: cookie}, err
		},
		func(_ int, s page) (*http.Request, error) {
			i := int(n.Add(1))
			if search {
				s.url += "?q=" + url.QueryEscape(fmt.Sprint(100+i%900))
			} else {
				s.url += "?page=" + fmt.Sprint(1+i%200)
			}
			return getPage(s)
		},
		nil)
}
