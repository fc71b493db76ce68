package oauth

import (
	"net/http"
)

// HandleRevoke handles "POST /oauth/revoke", token revocation (RFC 7009).
// The client identifies itself as at the token endpoint (a public client
// by client_id; a failed identification is 401 invalid_client); token is
// a refresh or access token of an OAuth grant session, token_type_hint
// only orders the lookups. The answer is 200 with an empty body whether
// or not anything was revoked (RFC 7009 §2.2): a token issued to another
// client, a sign-in session's, an unknown, expired or forged one is left
// alone, and the endpoint tells a prober nothing about it.
func (s *Server) HandleRevoke() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		cors(w)
		form, c, err := s.clientForm(r)
		if err != nil {
			return err
		}
		raw := form.Get("token")
		if raw == "" {
			return invalidRequest("token is required")
		}
		if err := s.svc.RevokeGrantToken(r.Context(), raw, form.Get("token_type_hint"), c.ID); err != nil {
			return serverError(err)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Pragma", "no-cache")
		w.WriteHeader(http.StatusOK)
		return nil
	})
}
