// Package tasks is the Tasks tool API of TOOLS.md: issues of the org's
// teams with workflow states and labels, soft delete of whole sub-issue
// subtrees, and restore (spec 4.6). A caller works on the issues of the
// teams they are a member of; anything else reads as not found.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse"
)

// The five workflow states every team gets when first used, in order.
var defaultStates = []State{
	{Name: "Backlog", Type: "backlog", Color: "#bec2c8", Position: 0},
	{Name: "Todo", Type: "unstarted", Color: "#e2e2e2", Position: 1},
	{Name: "In Progress", Type: "started", Color: "#f2c94c", Position: 2},
	{Name: "Done", Type: "completed", Color: "#5e6ad2", Position: 3},
	{Name: "Canceled", Type: "canceled", Color: "#95a2b3", Position: 4},
}

// Bounds of issue fields, decided in docs/decisions.md.
const (
	MaxTitle       = 500
	MaxDescription = 100_000
	MaxLabels      = 50
	MaxLabelName   = 64
	MaxEstimate    = 1_000_000
)

// State is a workflow state of a team.
type State struct {
	ID, TeamID, Name, Type, Color, Description string
	Position                                   float64
}

// Label is a team's issue label.
type Label struct {
	ID, TeamID, Name, Color string
}

// Person is an assignee.
type Person struct {
	ID, Name, Email string
	Created         time.Time
}

// Issue is a Tasks issue with what its answer shows.
type Issue struct {
	ID, OrgID, TeamID, Title, Description string
	ParentID, AssigneeID, DueDate         string // "" when unset
	StateID, CreatorID                    string
	Number                                int64
	Priority                              int
	Estimate                              *int
	Position                              float64
	Created, Modified                     time.Time
	CompletedAt, DeletedAt                *time.Time

	// Filled when read.
	State      State
	Assignee   *Person
	Labels     []Label
	ChildCount int
}

// Store persists Tasks; ErrNotFound and ErrConflict as in workspace.
type Store interface {
	// Tx runs fn in a read-write transaction.
	Tx(ctx context.Context, fn func(tx Store) error) error
	// MemberTeam reports whether teamID is a live team of orgID that
	// userID is a member of.
	MemberTeam(ctx context.Context, orgID, teamID, userID string) (bool, error)
	// MemberTeams lists the live teams of orgID that userID is a member of.
	MemberTeams(ctx context.Context, orgID, userID string) ([]string, error)
	// IsOrgMember reports whether userID is a member of orgID.
	IsOrgMember(ctx context.Context, orgID, userID string) (bool, error)
	// EnsureStates inserts the states a team lacks (by type).
	EnsureStates(ctx context.Context, states []State) error
	States(ctx context.Context, teamID string) ([]State, error)
	// LockTeam serializes the issue-tree changes of a team until the
	// transaction ends (parents, deletes and restores see one another).
	LockTeam(ctx context.Context, teamID string) error
	// NextNumber gives out the team's next issue number.
	NextNumber(ctx context.Context, teamID string) (int64, error)
	InsertIssue(ctx context.Context, i *Issue) error
	// UpdateIssue writes the editable fields, modified and completed_at.
	UpdateIssue(ctx context.Context, i *Issue) error
	// Issue reads an issue of orgID, deleted or not, with state, assignee,
	// labels and child count.
	Issue(ctx context.Context, orgID, id string) (*Issue, error)
	// Issues lists the issues of teams, live or deleted, oldest first.
	Issues(ctx context.Context, orgID string, teams []string, deleted bool) ([]*Issue, error)
	// Subtree returns the ids of id's descendants, deleted or not.
	Subtree(ctx context.Context, id string) ([]string, error)
	// SetDeleted sets deleted_at of ids not deleted yet (at != nil; those
	// deleted earlier keep their time) or clears it (at == nil).
	SetDeleted(ctx context.Context, ids []string, at *time.Time, modified time.Time) error
	// EnsureLabels returns the team's labels of names, creating missing ones.
	EnsureLabels(ctx context.Context, labels []Label) ([]Label, error)
	SetIssueLabels(ctx context.Context, issueID string, labelIDs []string) error
	AddAudit(ctx context.Context, e *gatehouse.AuditEntry) error
}

// Service is the Tasks tool.
type Service struct {
	store Store
	clock gatehouse.Clock
}

// New returns the Tasks tool over store; now is the clock (nil: time.Now).
func New(store Store, now func() time.Time) *Service {
	return &Service{store: store, clock: gatehouse.NewClock(now)}
}

// Tool is the tool name tokens list to reach this API.
const Tool = "tasks"

var errIssueNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "issue not found")

// team checks that teamID is a live team of the caller's workspace the
// caller is in.
func (s *Service) team(ctx context.Context, st Store, p *gatehouse.Principal, teamID string) error {
	if !gatehouse.IsID(teamID) {
		return gatehouse.Errorf(gatehouse.KindNotFound, "team not found")
	}
	ok, err := st.MemberTeam(ctx, p.OrgID, teamID, p.UserID)
	if err != nil {
		return gatehouse.Internal("find team", err)
	}
	if !ok {
		return gatehouse.Errorf(gatehouse.KindNotFound, "team not found")
	}
	return nil
}

// States lists a team's workflow states, creating the five defaults on
// first use.
func (s *Service) States(ctx context.Context, p *gatehouse.Principal, teamID string) ([]State, error) {
	var out []State
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.team(ctx, tx, p, teamID); err != nil {
			return err
		}
		var err error
		out, err = s.states(ctx, tx, teamID)
		return err
	})
	return out, err
}

func (s *Service) states(ctx context.Context, tx Store, teamID string) ([]State, error) {
	have, err := tx.States(ctx, teamID)
	if err != nil {
		return nil, gatehouse.Internal("states", err)
	}
	if len(have) >= len(defaultStates) {
		return have, nil
	}
	add := make([]State, len(defaultStates))
	for i, d := range defaultStates {
		d.ID, d.TeamID = gatehouse.NewID(), teamID
		add[i] = d
	}
	if err := tx.EnsureStates(ctx, add); err != nil {
		return nil, gatehouse.Internal("create states", err)
	}
	if have, err = tx.States(ctx, teamID); err != nil {
		return nil, gatehouse.Internal("states", err)
	}
	return have, nil
}

// Create adds an issue to a team the caller is in.
func (s *Service) Create(ctx context.Context, p *gatehouse.Principal, in *Input) (*Issue, error) {
	if in.TeamID == nil || *in.TeamID == "" {
		return nil, gatehouse.Invalid("teamId is required")
	}
	if in.Title == nil {
		return nil, gatehouse.Invalid("title is required")
	}
	var out *Issue
	err := s.store.Tx(ctx, func(tx Store) error {
		if err := s.team(ctx, tx, p, *in.TeamID); err != nil {
			return err
		}
		if err := tx.LockTeam(ctx, *in.TeamID); err != nil {
			return gatehouse.Internal("lock team", err)
		}
		states, err := s.states(ctx, tx, *in.TeamID)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		i := &Issue{ID: gatehouse.NewID(), OrgID: p.OrgID, TeamID: *in.TeamID, CreatorID: p.UserID, Created: now, Modified: now,
			StateID: states[0].ID}
		if err := s.apply(ctx, tx, p, i, in, states); err != nil {
			return err
		}
		if i.Number, err = tx.NextNumber(ctx, i.TeamID); err != nil {
			return gatehouse.Internal("issue number", err)
		}
		i.Position = float64(i.Number)
		if err := tx.InsertIssue(ctx, i); err != nil {
			return gatehouse.Internal("create issue", err)
		}
		if err := s.labels(ctx, tx, i, in); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, p, i, "created", map[string]any{"number": i.Number, "title": i.Title}); err != nil {
			return err
		}
		out, err = tx.Issue(ctx, p.OrgID, i.ID)
		return err
	})
	return out, err
}

// apply validates in and writes it into i (everything but teamId), field
// by field in a fixed order so that the first problem is the one reported.
func (s *Service) apply(ctx context.Context, tx Store, p *gatehouse.Principal, i *Issue, in *Input, states []State) error {
	if err := applyFields(i, in); err != nil {
		return err
	}
	if err := s.applyState(i, in, states); err != nil {
		return err
	}
	if err := applyAssignee(ctx, tx, p, i, in); err != nil {
		return err
	}
	if in.ParentID != nil {
		if err := s.parent(ctx, tx, p, i, *in.ParentID); err != nil {
			return err
		}
		i.ParentID = *in.ParentID
	} else if in.Clear["parentId"] {
		i.ParentID = ""
	}
	return nil
}

// applyFields writes the fields that need no lookup: title, description,
// priority, estimate and dueDate.
func applyFields(i *Issue, in *Input) error {
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if t == "" {
			return gatehouse.Invalid("title must not be empty")
		}
		if utf8.RuneCountInString(t) > MaxTitle {
			return gatehouse.Invalid("title is longer than %d characters", MaxTitle)
		}
		i.Title = t
	} else if in.Clear["title"] {
		return gatehouse.Invalid("title must not be empty")
	}
	if in.Description != nil {
		if len(*in.Description) > MaxDescription {
			return gatehouse.Invalid("description is longer than %d bytes", MaxDescription)
		}
		i.Description = *in.Description
	} else if in.Clear["description"] {
		i.Description = ""
	}
	if in.Priority != nil {
		if *in.Priority < 0 || *in.Priority > 4 {
			return gatehouse.Invalid("priority must be an integer from 0 to 4")
		}
		i.Priority = *in.Priority
	} else if in.Clear["priority"] {
		i.Priority = 0
	}
	if in.Estimate != nil {
		if *in.Estimate < 0 || *in.Estimate > MaxEstimate {
			return gatehouse.Invalid("estimate must be an integer from 0 to %d", MaxEstimate)
		}
		e := *in.Estimate
		i.Estimate = &e
	} else if in.Clear["estimate"] {
		i.Estimate = nil
	}
	if in.DueDate != nil {
		if _, err := time.Parse(time.DateOnly, *in.DueDate); err != nil {
			return gatehouse.Invalid("dueDate must be a date (YYYY-MM-DD)")
		}
		i.DueDate = *in.DueDate
	} else if in.Clear["dueDate"] {
		i.DueDate = ""
	}
	return nil
}

// applyState moves i to the workflow state in.StateID names, stamping or clearing
// its completion time.
func (s *Service) applyState(i *Issue, in *Input, states []State) error {
	if in.StateID != nil {
		var found *State
		for k := range states {
			if states[k].ID == *in.StateID {
				found = &states[k]
			}
		}
		if found == nil {
			return gatehouse.Invalid("stateId is not a workflow state of the issue's team")
		}
		if found.Type == "completed" && (i.CompletedAt == nil || i.StateID != found.ID) {
			at := s.clock.Now()
			i.CompletedAt = &at
		} else if found.Type != "completed" {
			i.CompletedAt = nil
		}
		i.StateID = found.ID
	} else if in.Clear["stateId"] {
		return gatehouse.Invalid("stateId must not be null")
	}
	return nil
}

// applyAssignee assigns i to a member of the caller's workspace.
func applyAssignee(ctx context.Context, tx Store, p *gatehouse.Principal, i *Issue, in *Input) error {
	if in.AssigneeID != nil {
		ok := gatehouse.IsID(*in.AssigneeID)
		if ok {
			var err error
			if ok, err = tx.IsOrgMember(ctx, p.OrgID, *in.AssigneeID); err != nil {
				return gatehouse.Internal("find assignee", err)
			}
		}
		if !ok {
			return gatehouse.Invalid("assigneeId is not a member of this workspace")
		}
		i.AssigneeID = *in.AssigneeID
	} else if in.Clear["assigneeId"] {
		i.AssigneeID = ""
	}
	return nil
}

func (s *Service) labels(ctx context.Context, tx Store, i *Issue, in *Input) error {
	if in.Labels == nil && !in.Clear["labels"] {
		return nil
	}
	var names []string
	if in.Labels != nil {
		names = *in.Labels
	}
	if len(names) > MaxLabels {
		return gatehouse.Invalid("at most %d labels", MaxLabels)
	}
	seen := map[string]bool{}
	var want []Label
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || utf8.RuneCountInString(n) > MaxLabelName {
			return gatehouse.Invalid("a label name must have 1 to %d characters", MaxLabelName)
		}
		if !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			want = append(want, Label{ID: gatehouse.NewID(), TeamID: i.TeamID, Name: n, Color: "#95a2b3"})
		}
	}
	got, err := tx.EnsureLabels(ctx, want)
	if err != nil {
		return gatehouse.Internal("labels", err)
	}
	ids := make([]string, len(got))
	for k, l := range got {
		ids[k] = l.ID
	}
	if err := tx.SetIssueLabels(ctx, i.ID, ids); err != nil {
		return gatehouse.Internal("set labels", err)
	}
	return nil
}

// visible reads a live or deleted issue of a team the caller is in.
func (s *Service) visible(ctx context.Context, tx Store, p *gatehouse.Principal, id string) (*Issue, error) {
	if !gatehouse.IsID(id) {
		return nil, errIssueNotFound
	}
	i, err := tx.Issue(ctx, p.OrgID, id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return nil, errIssueNotFound
	}
	if err != nil {
		return nil, gatehouse.Internal("find issue", err)
	}
	ok, err := tx.MemberTeam(ctx, p.OrgID, i.TeamID, p.UserID)
	if err != nil {
		return nil, gatehouse.Internal("find team", err)
	}
	if !ok {
		return nil, errIssueNotFound
	}
	return i, nil
}

// locked is visible inside a write transaction, read again once the
// issue's team is locked, so tree checks see every committed change.
func (s *Service) locked(ctx context.Context, tx Store, p *gatehouse.Principal, id string) (*Issue, error) {
	i, err := s.visible(ctx, tx, p, id)
	if err != nil {
		return nil, err
	}
	if err := tx.LockTeam(ctx, i.TeamID); err != nil {
		return nil, gatehouse.Internal("lock team", err)
	}
	return s.visible(ctx, tx, p, id)
}

// Get reads a live issue.
func (s *Service) Get(ctx context.Context, p *gatehouse.Principal, id string) (*Issue, error) {
	i, err := s.visible(ctx, s.store, p, id)
	if err != nil {
		return nil, err
	}
	if i.DeletedAt != nil {
		return nil, errIssueNotFound
	}
	return i, nil
}

// List lists the live (or, deleted, the Recently Deleted) issues of the
// caller's teams, or of one of them.
func (s *Service) List(ctx context.Context, p *gatehouse.Principal, teamID string, deleted bool) ([]*Issue, error) {
	teams := []string{teamID}
	if teamID == "" {
		var err error
		if teams, err = s.store.MemberTeams(ctx, p.OrgID, p.UserID); err != nil {
			return nil, gatehouse.Internal("teams", err)
		}
	} else if err := s.team(ctx, s.store, p, teamID); err != nil {
		return nil, err
	}
	if len(teams) == 0 {
		return []*Issue{}, nil
	}
	out, err := s.store.Issues(ctx, p.OrgID, teams, deleted)
	if err != nil {
		return nil, gatehouse.Internal("list issues", err)
	}
	return out, nil
}

// Update edits a live issue.
func (s *Service) Update(ctx context.Context, p *gatehouse.Principal, id string, in *Input) (*Issue, error) {
	if in.TeamID != nil || in.Clear["teamId"] {
		return nil, gatehouse.Invalid("teamId cannot be changed")
	}
	var out *Issue
	err := s.store.Tx(ctx, func(tx Store) error {
		i, err := s.locked(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if i.DeletedAt != nil {
			return errIssueNotFound
		}
		states, err := s.states(ctx, tx, i.TeamID)
		if err != nil {
			return err
		}
		if err := s.apply(ctx, tx, p, i, in, states); err != nil {
			return err
		}
		i.Modified = s.clock.Now()
		if err := tx.UpdateIssue(ctx, i); err != nil {
			return gatehouse.Internal("update issue", err)
		}
		if err := s.labels(ctx, tx, i, in); err != nil {
			return err
		}
		changed := []string{}
		for _, f := range []string{"title", "description", "parentId", "stateId", "assigneeId", "priority", "estimate", "dueDate", "labels"} {
			if in.Clear[f] || in.set(f) {
				changed = append(changed, f)
			}
		}
		if err := s.audit(ctx, tx, p, i, "updated", map[string]any{"fields": changed}); err != nil {
			return err
		}
		out, err = tx.Issue(ctx, p.OrgID, i.ID)
		return err
	})
	return out, err
}

func (s *Service) audit(ctx context.Context, tx Store, p *gatehouse.Principal, i *Issue, verb string, meta map[string]any) error {
	m, _ := json.Marshal(meta)
	err := tx.AddAudit(ctx, &gatehouse.AuditEntry{ID: gatehouse.NewID(), OrgID: i.OrgID, Tool: Tool, Action: Tool + ".issue." + verb,
		ActorID: p.UserID, TargetType: "issue", TargetID: i.ID, Meta: string(m), At: s.clock.Now()})
	if err != nil {
		return gatehouse.Internal("audit", err)
	}
	return nil
}
