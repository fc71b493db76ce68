package web

import (
	"errors"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/api"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// routes are the kernel's own: health, readiness and the API description. The
// modules' mounts are listed in internal/app/routes.go.
func (s *Server) routes() {
	s.mux.Handle("GET /health", s.handle(s.handleHealth))
	s.mux.Handle("GET /ready", s.handle(s.handleReady))
	s.mux.HandleFunc("GET /openapi.json", handleOpenAPI)
}

// handleOpenAPI handles "GET /openapi.json": the OpenAPI document of the
// whole API (bundled from api/openapi/), the same for every caller, so cacheable.
func handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(api.Document())
}

// handleHealth handles "GET /health": 200 while the database answers, 503
// when it does not.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if err := s.health(r.Context()); err != nil {
		s.log.Warn("health: database not answering", "err", err)
		httpjson.Write(w, http.StatusServiceUnavailable, errorBody{"database is not answering"})
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok", "database": "ok"})
	return nil
}

// Route is the pattern of the route that serves r ("GET /v1/orgs/{id}"),
// or "" when no route does (the answer is 404 or 405). The end-to-end
// tests use it to find the operation of the OpenAPI document that a
// response must match.
func (s *Server) Route(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	return pattern
}

// handleReady handles "GET /ready": 200 while the instance should be sent
// traffic (migrations applied, job workers running, password hashing not
// saturated), 503 with the reason when it should not.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) error {
	if err := s.ready(r.Context()); err != nil {
		s.log.Warn("ready: not ready", "err", err)
		msg := "not ready"
		var e *gatehouse.Error
		if errors.As(err, &e) && e.Kind != gatehouse.KindInternal {
			msg = e.Message
		}
		httpjson.Write(w, http.StatusServiceUnavailable, errorBody{msg})
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
