package mcp

import (
	"context"
	"encoding/json"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
)

// teamJSON is a team a Tasks issue may belong to.
type teamJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	MyRole      string `json:"myRole"`
}

type (
	teamsOut struct {
		Teams []teamJSON `json:"teams"`
	}
	issuesOut struct {
		Issues     []tasks.IssueJSON `json:"issues"`
		NextCursor *string           `json:"nextCursor"`
	}
	issueOut struct {
		Issue tasks.IssueJSON `json:"issue"`
	}
)

// issueProps are the fields of an issue create or update (the Tasks API's
// body).
var issueProps = map[string]any{
	"teamId":      map[string]any{"type": "string", "description": "the team (create only)"},
	"title":       map[string]any{"type": "string"},
	"description": map[string]any{"type": []string{"string", "null"}},
	"parentId":    map[string]any{"type": []string{"string", "null"}},
	"stateId":     map[string]any{"type": []string{"string", "null"}},
	"assigneeId":  map[string]any{"type": []string{"string", "null"}},
	"priority":    map[string]any{"type": []string{"integer", "null"}, "description": "0 none, 1 urgent … 4 low"},
	"estimate":    map[string]any{"type": []string{"integer", "null"}},
	"dueDate":     map[string]any{"type": []string{"string", "null"}, "description": "YYYY-MM-DD"},
	"labels":      map[string]any{"type": []string{"array", "null"}, "items": map[string]any{"type": "string"}},
}

// tasksTools are the Tasks operations.
func (s *Server) tasksTools() []*tool {
	svc := s.cfg.Tasks
	if svc == nil {
		return nil
	}
	const m = tasks.Tool
	read, write := gatehouse.Read, gatehouse.Write
	issue := func(i *tasks.Issue, verb string) (any, string, error) {
		return issueOut{tasks.ToIssueJSON(i)}, verb + " issue " + i.ID + ": " + i.Title, nil
	}
	return []*tool{
		{name: "tasks_list_teams", module: m, access: read, title: "List teams",
			desc: "Lists the workspace's teams; an issue belongs to one.", in: object(map[string]any{}), out: schemaOf[teamsOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				if err := decode(args, &struct{}{}); err != nil {
					return nil, "", err
				}
				if s.cfg.Teams == nil {
					return teamsOut{Teams: []teamJSON{}}, "0 teams", nil
				}
				ts, err := s.cfg.Teams(ctx, p, p.OrgID)
				if err != nil {
					return nil, "", err
				}
				out := teamsOut{Teams: make([]teamJSON, len(ts))}
				for i, t := range ts {
					out.Teams[i] = teamJSON{ID: t.ID, Name: t.Name, Description: t.Description, MyRole: t.MyRole}
				}
				return out, plural(len(ts), "team", "teams"), nil
			}},
		{name: "tasks_list_issues", module: m, access: read, title: "List issues",
			desc: "Lists the live issues of the teams you are in (or, with deleted, the recently deleted ones), optionally of one team.",
			in: object(with(map[string]any{
				"teamId":  map[string]any{"type": "string"},
				"deleted": map[string]any{"type": "boolean", "description": "the recently deleted issues instead"},
			}, pageProps)), out: schemaOf[issuesOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				var in struct {
					TeamID  string          `json:"teamId"`
					Deleted json.RawMessage `json:"deleted"`
					page
				}
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				deleted := false
				switch string(in.Deleted) { // as the API reads ?deleted=
				case "", "null", "false", `"false"`:
				case "true", `"true"`:
					deleted = true
				default:
					return nil, "", gatehouse.Invalid("deleted must be true or false")
				}
				list, err := svc.List(ctx, p, in.TeamID, deleted)
				if err != nil {
					return nil, "", err
				}
				items, next, err := pageAs(list, in.page, tasks.ToIssueJSON)
				if err != nil {
					return nil, "", err
				}
				return issuesOut{Issues: items, NextCursor: next}, plural(len(items), "issue", "issues"), nil
			}},
		{name: "tasks_get_issue", module: m, access: read, title: "Get an issue", desc: "Reads one live issue.",
			in: object(idProp, "id"), out: schemaOf[issueOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				i, err := svc.Get(ctx, p, id)
				if err != nil {
					return nil, "", err
				}
				return issue(i, "read")
			}},
		{name: "tasks_create_issue", module: m, access: write, title: "Create an issue",
			desc: "Creates an issue in a team you are in (teamId and title are required).",
			in:   object(issueProps, "teamId", "title"), out: schemaOf[issueOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				in, err := issueInput(args, false)
				if err != nil {
					return nil, "", err
				}
				i, err := svc.Create(ctx, p, in)
				if err != nil {
					return nil, "", err
				}
				return issue(i, "created")
			}},
		{name: "tasks_update_issue", module: m, access: write, title: "Update an issue",
			desc: "Changes the fields given of a live issue; null clears a nullable field.",
			in:   object(with(idProp, issueProps), "id"), out: schemaOf[issueOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				in, err := issueInput(args, true)
				if err != nil {
					return nil, "", err
				}
				i, err := svc.Update(ctx, p, id, in)
				if err != nil {
					return nil, "", err
				}
				return issue(i, "updated")
			}},
		{name: "tasks_delete_issue", module: m, access: write, title: "Delete an issue", destructive: true,
			desc: "Moves an issue (and its sub-issues) to Recently Deleted, from where it can be restored.",
			in:   object(idProp, "id"), out: schemaOf[message](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				if err := svc.Delete(ctx, p, id); err != nil {
					return nil, "", err
				}
				return message{"issue deleted"}, "issue deleted", nil
			}},
		{name: "tasks_restore_issue", module: m, access: write, title: "Restore an issue",
			desc: "Restores a recently deleted issue.", in: object(idProp, "id"), out: schemaOf[issueOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				i, err := svc.Restore(ctx, p, id)
				if err != nil {
					return nil, "", err
				}
				return issue(i, "restored")
			}},
	}
}

// issueInput decodes an issue's fields as the Tasks API decodes its body
// (tasks.DecodeInput); update leaves the id out.
func issueInput(args json.RawMessage, update bool) (*tasks.Input, error) {
	raw := map[string]json.RawMessage{}
	if err := decode(args, &raw); err != nil {
		return nil, err
	}
	if update {
		delete(raw, "id")
	}
	return tasks.DecodeInput(raw)
}
