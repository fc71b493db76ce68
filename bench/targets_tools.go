package main

import (
	"context"
	"errors"
	"net/http"
)

// linkGetTarget measures a tool API: "GET /links/v1/links/{id}" with the
// bench user's access token, one link it created in setup. The kernel's
// tool guard (token, audience, scope, workspace access) runs on every
// request, then one read of the link.
func linkGetTarget() target {
	return newTarget("link_get",
		func(ctx context.Context, e *env) (bearer, error) {
			var out struct {
				Link struct {
					ID string `json:"id"`
				} `json:"link"`
			}
			err := callAs(ctx, e.client, http.MethodPost, e.baseURL+"/links/v1/links", e.user.session.AccessToken,
				map[string]string{"destinationUrl": "https://example.com/bench"}, &out)
			if why, ok := missingRoute(err); ok {
				return bearer{}, skipf("%s: Links is not in this build", why)
			}
			if err != nil {
				return bearer{}, err
			}
			if out.Link.ID == "" {
				return bearer{}, errors.New("POST /links/v1/links: no id in the answer")
			}
			u := bearer{e.baseURL + "/links/v1/links/" + out.Link.ID, e.user.session.AccessToken}
			return u, callAs(ctx, e.client, http.MethodGet, u.url, u.token, nil, nil)
		},
		func(_ int, s bearer) (*http.Request, error) { return getBearer(s.url, s.token) },
		nil)
}
