package web

import (
	"encoding/json"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/tasks"
)

// taskRoutes serves the Tasks tool API of TOOLS.md under /tasks/v1/.
func (s *Server) taskRoutes(m *http.ServeMux) {
	t := func(h authedFunc) http.Handler { return s.tool(tasks.Tool, h) }
	m.Handle("GET /tasks/v1/teams/{teamId}/states", t(s.handleTaskStates))
	m.Handle("POST /tasks/v1/issues", t(s.handleCreateIssue))
	m.Handle("GET /tasks/v1/issues", t(s.handleIssues))
	m.Handle("GET /tasks/v1/issues/{id}", t(s.handleIssue))
	m.Handle("PATCH /tasks/v1/issues/{id}", t(s.handleUpdateIssue))
	m.Handle("DELETE /tasks/v1/issues/{id}", t(s.handleDeleteIssue))
	m.Handle("POST /tasks/v1/issues/{id}/restore", t(s.handleRestoreIssue))
}

type taskStateJSON struct {
	ID          string  `json:"id"`
	TeamID      string  `json:"teamId"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Color       string  `json:"color"`
	Position    float64 `json:"position"`
	Description string  `json:"description"`
	CanDelete   bool    `json:"canDelete"`
}

func toTaskState(st tasks.State) taskStateJSON {
	// The five default states are the workflow itself: none can be deleted.
	return taskStateJSON{ID: st.ID, TeamID: st.TeamID, Name: st.Name, Type: st.Type, Color: st.Color,
		Position: st.Position, Description: st.Description, CanDelete: false}
}

type taskAssigneeJSON struct {
	ID      string `json:"id"`
	UserID  string `json:"userId"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Created string `json:"created"`
}

type taskLabelJSON struct {
	ID     string `json:"id"`
	TeamID string `json:"teamId"`
	Name   string `json:"name"`
	Color  string `json:"color"`
}

// issueJSON is the Issue of spec section 2.
type issueJSON struct {
	ID             string            `json:"id"`
	TeamID         string            `json:"teamId"`
	ProjectID      *string           `json:"projectId"`
	StateID        string            `json:"stateId"`
	CreatorID      string            `json:"creatorId"`
	AssigneeID     *string           `json:"assigneeId"`
	ParentID       *string           `json:"parentId"`
	CycleID        *string           `json:"cycleId"`
	Number         int64             `json:"number"`
	Title          string            `json:"title"`
	Description    string            `json:"description"`
	Priority       int               `json:"priority"`
	Estimate       *int              `json:"estimate"`
	ChildCount     int               `json:"childCount"`
	BlockedByCount int               `json:"blockedByCount"`
	Position       float64           `json:"position"`
	DueDate        *string           `json:"dueDate"`
	Created        string            `json:"created"`
	Modified       string            `json:"modified"`
	CompletedAt    *string           `json:"completedAt"`
	Following      bool              `json:"following"`
	State          taskStateJSON     `json:"state"`
	Assignee       *taskAssigneeJSON `json:"assignee"`
	Labels         []taskLabelJSON   `json:"labels"`
	Mentions       []any             `json:"mentions"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toIssue(i *tasks.Issue) issueJSON {
	out := issueJSON{ID: i.ID, TeamID: i.TeamID, StateID: i.StateID, CreatorID: i.CreatorID, AssigneeID: optional(i.AssigneeID),
		ParentID: optional(i.ParentID), Number: i.Number, Title: i.Title, Description: i.Description, Priority: i.Priority,
		Estimate: i.Estimate, ChildCount: i.ChildCount, Position: i.Position, DueDate: optional(i.DueDate),
		Created: stamp(i.Created), Modified: stamp(i.Modified), CompletedAt: stampPtr(i.CompletedAt),
		State: toTaskState(i.State), Labels: make([]taskLabelJSON, len(i.Labels)), Mentions: []any{}}
	if a := i.Assignee; a != nil {
		out.Assignee = &taskAssigneeJSON{ID: a.ID, UserID: a.ID, Name: a.Name, Email: a.Email, Created: stamp(a.Created)}
	}
	for k, l := range i.Labels {
		out.Labels[k] = taskLabelJSON{ID: l.ID, TeamID: l.TeamID, Name: l.Name, Color: l.Color}
	}
	return out
}

func (s *Server) handleTaskStates(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	states, err := s.tasks.States(r.Context(), p, r.PathValue("teamId"))
	if err != nil {
		return err
	}
	out := make([]taskStateJSON, len(states))
	for k, st := range states {
		out[k] = toTaskState(st)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"states": out})
	return nil
}

func decodeIssue(r *http.Request) (*tasks.Input, error) {
	raw := map[string]json.RawMessage{}
	if err := decode(r, &raw); err != nil {
		return nil, err
	}
	return tasks.DecodeInput(raw)
}

func (s *Server) handleCreateIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	in, err := decodeIssue(r)
	if err != nil {
		return err
	}
	i, err := s.tasks.Create(r.Context(), p, in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}

func (s *Server) handleIssues(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	q := r.URL.Query()
	deleted := false
	switch q.Get("deleted") {
	case "", "false":
	case "true":
		deleted = true
	default:
		return gatehouse.Invalid("deleted must be true or false")
	}
	list, err := s.tasks.List(r.Context(), p, q.Get("teamId"), deleted)
	if err != nil {
		return err
	}
	out := make([]issueJSON, len(list))
	for k, i := range list {
		out[k] = toIssue(i)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issues": out})
	return nil
}

func (s *Server) handleIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	i, err := s.tasks.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}

func (s *Server) handleUpdateIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	in, err := decodeIssue(r)
	if err != nil {
		return err
	}
	i, err := s.tasks.Update(r.Context(), p, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}

func (s *Server) handleDeleteIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.tasks.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"issue deleted"})
	return nil
}

func (s *Server) handleRestoreIssue(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	i, err := s.tasks.Restore(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"issue": toIssue(i)})
	return nil
}
