package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// verifyAnswer has the shape of the answer to "GET /v1/auth/verify".
type verifyAnswer struct {
	Valid   bool   `json:"valid"`
	UserID  string `json:"user_id"`
	Email   string `json:"email"`
	Name    string `json:"name"`
	OrgID   string `json:"org_id"`
	OrgRole string `json:"org_role"`
}

// baselineHandler is the floor the verify endpoint is compared with: plain
// net/http that checks an Authorization header is present and encodes a
// verify-shaped JSON answer, with no token check and no database.
func baselineHandler() http.Handler {
	answer := verifyAnswer{
		Valid:   true,
		UserID:  "0b5c3f0e-6a53-4d3c-9d8e-2f4f7f0b9a11",
		Email:   "bench@example.com",
		Name:    "Bench User",
		OrgID:   "5d7e2c1a-9b4f-4e0a-8c3d-1a2b3c4d5e6f",
		OrgRole: "owner",
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/auth/verify", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "missing bearer token"})
			return
		}
		json.NewEncoder(w).Encode(answer)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return mux
}

// serveBaseline runs the baseline server on 127.0.0.1 and a free port
// until ctx ends. The bench runs it as a separate process (itself, with
// -serve-baseline) so that, like gatehouse, it does not share the load
// generator's Go runtime.
func serveBaseline(ctx context.Context, stderr io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: baselineHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "baseline: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	}
}
