package scim

import (
	"net/http"
)

// handleListGroups handles "GET /scim/v2/Groups".
func (h *handlers) handleListGroups(w http.ResponseWriter, r *http.Request, tok *Token) error {
	q, err := listQuery(r)
	if err != nil {
		return err
	}
	res, err := h.svc.ListGroups(r.Context(), tok, q)
	if err != nil {
		return err
	}
	writeList(w, r, res)
	return nil
}

// handleGroup handles "GET /scim/v2/Groups/{gid}".
func (h *handlers) handleGroup(w http.ResponseWriter, r *http.Request, tok *Token) error {
	g, err := h.svc.Group(r.Context(), tok, r.PathValue("gid"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	write(w, http.StatusOK, project(g, splitList(q.Get("attributes")), splitList(q.Get("excludedAttributes"))))
	return nil
}

// handleCreateGroup handles "POST /scim/v2/Groups": 201 with the group.
func (h *handlers) handleCreateGroup(w http.ResponseWriter, r *http.Request, tok *Token) error {
	var in map[string]any
	if err := decode(r, &in); err != nil {
		return err
	}
	g, err := h.svc.CreateGroup(r.Context(), tok, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", g["meta"].(map[string]any)["location"].(string))
	write(w, http.StatusCreated, g)
	return nil
}

// handleReplaceGroup handles "PUT /scim/v2/Groups/{gid}".
func (h *handlers) handleReplaceGroup(w http.ResponseWriter, r *http.Request, tok *Token) error {
	var in map[string]any
	if err := decode(r, &in); err != nil {
		return err
	}
	g, err := h.svc.ReplaceGroup(r.Context(), tok, r.PathValue("gid"), in)
	if err != nil {
		return err
	}
	write(w, http.StatusOK, g)
	return nil
}

// handlePatchGroup handles "PATCH /scim/v2/Groups/{gid}".
func (h *handlers) handlePatchGroup(w http.ResponseWriter, r *http.Request, tok *Token) error {
	var in struct {
		Operations []patchOp `json:"Operations"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	g, err := h.svc.PatchGroup(r.Context(), tok, r.PathValue("gid"), in.Operations)
	if err != nil {
		return err
	}
	write(w, http.StatusOK, g)
	return nil
}

// handleDeleteGroup handles "DELETE /scim/v2/Groups/{gid}": 204.
func (h *handlers) handleDeleteGroup(w http.ResponseWriter, r *http.Request, tok *Token) error {
	if err := h.svc.DeleteGroup(r.Context(), tok, r.PathValue("gid")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
