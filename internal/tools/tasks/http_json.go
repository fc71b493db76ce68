package tasks

import "github.com/gatehouse/gatehouse/internal/httpjson"

// stateJSON is the WorkflowState of spec section 2.
type stateJSON struct {
	ID          string  `json:"id"`
	TeamID      string  `json:"teamId"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Color       string  `json:"color"`
	Position    float64 `json:"position"`
	Description string  `json:"description"`
	CanDelete   bool    `json:"canDelete"`
}

func toState(st State) stateJSON {
	// The five default states are the workflow itself: none can be deleted.
	return stateJSON{ID: st.ID, TeamID: st.TeamID, Name: st.Name, Type: st.Type, Color: st.Color,
		Position: st.Position, Description: st.Description, CanDelete: false}
}

type assigneeJSON struct {
	ID      string `json:"id"`
	UserID  string `json:"userId"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Created string `json:"created"`
}

type labelJSON struct {
	ID     string `json:"id"`
	TeamID string `json:"teamId"`
	Name   string `json:"name"`
	Color  string `json:"color"`
}

// issueJSON is the Issue of spec section 2.
type issueJSON struct {
	ID             string        `json:"id"`
	TeamID         string        `json:"teamId"`
	ProjectID      *string       `json:"projectId"`
	StateID        string        `json:"stateId"`
	CreatorID      string        `json:"creatorId"`
	AssigneeID     *string       `json:"assigneeId"`
	ParentID       *string       `json:"parentId"`
	CycleID        *string       `json:"cycleId"`
	Number         int64         `json:"number"`
	Title          string        `json:"title"`
	Description    string        `json:"description"`
	Priority       int           `json:"priority"`
	Estimate       *int          `json:"estimate"`
	ChildCount     int           `json:"childCount"`
	BlockedByCount int           `json:"blockedByCount"`
	Position       float64       `json:"position"`
	DueDate        *string       `json:"dueDate"`
	Created        string        `json:"created"`
	Modified       string        `json:"modified"`
	CompletedAt    *string       `json:"completedAt"`
	Following      bool          `json:"following"`
	State          stateJSON     `json:"state"`
	Assignee       *assigneeJSON `json:"assignee"`
	Labels         []labelJSON   `json:"labels"`
	Mentions       []any         `json:"mentions"`
}

func toIssue(i *Issue) issueJSON {
	opt, stamp := httpjson.Optional, httpjson.Stamp
	out := issueJSON{ID: i.ID, TeamID: i.TeamID, StateID: i.StateID, CreatorID: i.CreatorID, AssigneeID: opt(i.AssigneeID),
		ParentID: opt(i.ParentID), Number: i.Number, Title: i.Title, Description: i.Description, Priority: i.Priority,
		Estimate: i.Estimate, ChildCount: i.ChildCount, Position: i.Position, DueDate: opt(i.DueDate),
		Created: stamp(i.Created), Modified: stamp(i.Modified), CompletedAt: httpjson.StampPtr(i.CompletedAt),
		State: toState(i.State), Labels: make([]labelJSON, len(i.Labels)), Mentions: []any{}}
	if a := i.Assignee; a != nil {
		out.Assignee = &assigneeJSON{ID: a.ID, UserID: a.ID, Name: a.Name, Email: a.Email, Created: stamp(a.Created)}
	}
	for k, l := range i.Labels {
		out.Labels[k] = labelJSON{ID: l.ID, TeamID: l.TeamID, Name: l.Name, Color: l.Color}
	}
	return out
}

// IssueJSON is an Issue as the API shows it, for the MCP server's tools
// (internal/mcp), which answer in the same shape.
type IssueJSON = issueJSON

// ToIssueJSON is i as the API shows it.
func ToIssueJSON(i *Issue) IssueJSON { return toIssue(i) }
