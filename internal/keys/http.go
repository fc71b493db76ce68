package keys

import (
	"encoding/json"
	"net/http"
)

// JWKSPath is where the ring's public keys are published.
const JWKSPath = "/.well-known/jwks.json"

// Mount serves the JWK Set on m; nothing without a ring.
func Mount(m *http.ServeMux, s Signer) {
	if s == nil {
		return
	}
	m.Handle("GET "+JWKSPath, HandleJWKS(s))
}

// HandleJWKS handles "GET /.well-known/jwks.json": the published public
// keys, each with kid, kty, alg and use. Any origin may read it, and
// caches may keep it five minutes (a new key signs at once, so a relying
// party that meets an unknown kid fetches the set again, as OIDC asks).
func HandleJWKS(s Signer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		set, err := s.PublicKeys(r.Context())
		if err != nil {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"error":"internal error"}` + "\n"))
			return
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(set)
	})
}
