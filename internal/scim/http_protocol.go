package scim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse"
)

// protocolFunc is a SCIM endpoint: it acts for the workspace of tok.
type protocolFunc func(w http.ResponseWriter, r *http.Request, tok *Token) error

// mountProtocol serves the SCIM protocol at /scim/v2; every answer under
// it, a refusal or an unknown path included, is in SCIM's shape.
func mountProtocol(m *http.ServeMux, k Kernel, h *handlers) {
	p := func(fn protocolFunc) http.Handler { return k.Public(h.protocol(fn)) }
	m.Handle("GET /scim/v2/ServiceProviderConfig", p(h.handleServiceProviderConfig))
	m.Handle("GET /scim/v2/ResourceTypes", p(h.handleResourceTypes))
	m.Handle("GET /scim/v2/Schemas", p(h.handleSchemas))
	m.Handle("GET /scim/v2/Users", p(h.handleListUsers))
	m.Handle("POST /scim/v2/Users", p(h.handleCreateUser))
	m.Handle("GET /scim/v2/Users/{uid}", p(h.handleUser))
	m.Handle("PUT /scim/v2/Users/{uid}", p(h.handleReplaceUser))
	m.Handle("PATCH /scim/v2/Users/{uid}", p(h.handlePatchUser))
	m.Handle("DELETE /scim/v2/Users/{uid}", p(h.handleDeleteUser))
	m.Handle("GET /scim/v2/Groups", p(h.handleListGroups))
	m.Handle("POST /scim/v2/Groups", p(h.handleCreateGroup))
	m.Handle("GET /scim/v2/Groups/{gid}", p(h.handleGroup))
	m.Handle("PUT /scim/v2/Groups/{gid}", p(h.handleReplaceGroup))
	m.Handle("PATCH /scim/v2/Groups/{gid}", p(h.handlePatchGroup))
	m.Handle("DELETE /scim/v2/Groups/{gid}", p(h.handleDeleteGroup))
	m.Handle("/scim/v2/", p(func(http.ResponseWriter, *http.Request, *Token) error {
		return gatehouse.Errorf(gatehouse.KindNotFound, "no such SCIM endpoint")
	}))
}

// protocol authenticates the SCIM token of r and runs fn; every error is
// answered in SCIM's shape here, so the kernel writes none.
func (h *handlers) protocol(fn protocolFunc) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := func() error {
			tok, err := h.authenticate(r)
			if err != nil {
				return err
			}
			return fn(w, r, tok)
		}()
		if err != nil {
			writeError(w, r, h.svc.log, h.status, err)
		}
		return nil
	}
}

// authenticate returns the live SCIM token r bears. A client IP whose
// failed attempts are spent is refused (429) before its token is looked
// at, a valid one included, so guessing stays bounded; each failure
// spends one attempt. The lookup is by the secret's hash, so no
// comparison of secrets leaks timing.
func (h *handlers) authenticate(r *http.Request) (*Token, error) {
	ip := h.clientIP(r)
	if ok, wait := h.failed.Check(ip); !ok {
		return nil, gatehouse.TooMany(wait)
	}
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		h.failed.Allow(ip)
		return nil, ErrBadToken
	}
	tok, err := h.svc.Authenticate(r.Context(), strings.TrimSpace(secret))
	if errors.Is(err, ErrBadToken) {
		h.failed.Allow(ip)
	}
	return tok, err
}

// decode reads a JSON body (application/scim+json or application/json).
func decode(r *http.Request, v any) error {
	d := json.NewDecoder(r.Body)
	if err := d.Decode(v); err != nil {
		if _, ok := err.(*http.MaxBytesError); ok {
			return err
		}
		return invalid(CodeInvalidSyntax, "the body is not a valid JSON object of the expected shape")
	}
	return nil
}

// listQuery reads a list's filter, startIndex and count.
func listQuery(r *http.Request) (Query, error) {
	q := r.URL.Query()
	query := Query{Filter: q.Get("filter"), StartIndex: 1, Count: DefaultCount}
	for name, dst := range map[string]*int{"startIndex": &query.StartIndex, "count": &query.Count} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return query, invalid(CodeInvalidValue, "%s must be an integer", name)
			}
			*dst = n
		}
	}
	return query, nil
}

// writeList answers a ListResponse of res, each resource projected as
// r's attributes and excludedAttributes ask.
func writeList(w http.ResponseWriter, r *http.Request, res *ListResult) {
	q := r.URL.Query()
	attrs, excluded := splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes"))
	out := make([]map[string]any, 0, len(res.Resources))
	for _, u := range res.Resources {
		out = append(out, project(u, attrs, excluded))
	}
	write(w, http.StatusOK, map[string]any{"schemas": []string{SchemaList}, "totalResults": res.Total, "startIndex": res.StartIndex,
		"itemsPerPage": len(out), "Resources": out})
}

// handleListUsers handles "GET /scim/v2/Users".
func (h *handlers) handleListUsers(w http.ResponseWriter, r *http.Request, tok *Token) error {
	q, err := listQuery(r)
	if err != nil {
		return err
	}
	res, err := h.svc.ListUsers(r.Context(), tok, q)
	if err != nil {
		return err
	}
	writeList(w, r, res)
	return nil
}

// handleUser handles "GET /scim/v2/Users/{uid}".
func (h *handlers) handleUser(w http.ResponseWriter, r *http.Request, tok *Token) error {
	u, err := h.svc.User(r.Context(), tok, r.PathValue("uid"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	write(w, http.StatusOK, project(u, splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes"))))
	return nil
}

// handleCreateUser handles "POST /scim/v2/Users": 201 with the resource.
func (h *handlers) handleCreateUser(w http.ResponseWriter, r *http.Request, tok *Token) error {
	var in map[string]any
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := h.svc.CreateUser(r.Context(), tok, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", u["meta"].(map[string]any)["location"].(string))
	write(w, http.StatusCreated, u)
	return nil
}

// handleReplaceUser handles "PUT /scim/v2/Users/{uid}".
func (h *handlers) handleReplaceUser(w http.ResponseWriter, r *http.Request, tok *Token) error {
	var in map[string]any
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := h.svc.ReplaceUser(r.Context(), tok, r.PathValue("uid"), in)
	if err != nil {
		return err
	}
	write(w, http.StatusOK, u)
	return nil
}

// handlePatchUser handles "PATCH /scim/v2/Users/{uid}".
func (h *handlers) handlePatchUser(w http.ResponseWriter, r *http.Request, tok *Token) error {
	var in struct {
		Operations []patchOp `json:"Operations"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := h.svc.PatchUser(r.Context(), tok, r.PathValue("uid"), in.Operations)
	if err != nil {
		return err
	}
	write(w, http.StatusOK, u)
	return nil
}

// handleDeleteUser handles "DELETE /scim/v2/Users/{uid}": 204.
func (h *handlers) handleDeleteUser(w http.ResponseWriter, r *http.Request, tok *Token) error {
	if err := h.svc.DeleteUser(r.Context(), tok, r.PathValue("uid")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
