package oauth

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// requestScope checks the scope a client asks for at the authorization or
// device authorization endpoint and returns the scope to grant: every word
// must be of the vocabulary (gatehouse.ScopesSupported) and, when the
// client registered a scope, within it; a request without scope gets the
// client's registered scope (RFC 6749 §3.3's pre-defined default), so a
// client registered for "tasks:read" cannot get an unscoped token by
// asking for nothing. Its error is invalid_scope.
func requestScope(c *Client, scope string) (string, *Error) {
	asked := gatehouse.Scopes(scope)
	registered := gatehouse.Scopes(c.Scope)
	if len(asked) == 0 && len(registered) > 0 {
		// Words of the registration Gatehouse does not know are left out:
		// registration does not refuse them, and they grant nothing.
		for _, w := range registered {
			if gatehouse.KnownScope(w) {
				asked = append(asked, w)
			}
		}
		return strings.Join(asked, " "), nil
	}
	for _, w := range asked {
		if !gatehouse.KnownScope(w) {
			return "", oauthErr("invalid_scope", http.StatusBadRequest, "unknown scope %s; the scopes are %s", w, strings.Join(gatehouse.ScopesSupported(), " "))
		}
		if len(registered) > 0 && !slices.Contains(registered, w) {
			return "", oauthErr("invalid_scope", http.StatusBadRequest, "scope %s is not among the scopes the client registered (%s)", w, strings.Join(registered, " "))
		}
	}
	return strings.Join(asked, " "), nil
}
