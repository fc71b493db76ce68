package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
)

// MemberTeam implements tasks.Store.
func (s *Tasks) MemberTeam(ctx context.Context, orgID, teamID, userID string) (bool, error) {
	var one int
	err := s.r().QueryRowContext(ctx, `SELECT 1 FROM teams t
		JOIN orgs o ON o.id = t.org_id AND o.deleted_at IS NULL
		JOIN team_members m ON m.team_id = t.id AND m.user_id = $3
		WHERE t.id = $1 AND t.org_id = $2 AND t.deleted_at IS NULL`, teamID, orgID, userID).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// MemberTeams implements tasks.Store.
func (s *Tasks) MemberTeams(ctx context.Context, orgID, userID string) ([]string, error) {
	return s.column(ctx, `SELECT t.id FROM teams t
		JOIN orgs o ON o.id = t.org_id AND o.deleted_at IS NULL
		JOIN team_members m ON m.team_id = t.id AND m.user_id = $2
		WHERE t.org_id = $1 AND t.deleted_at IS NULL ORDER BY t.created_at, t.id`, orgID, userID)
}

// IsOrgMember implements tasks.Store.
func (s *Tasks) IsOrgMember(ctx context.Context, orgID, userID string) (bool, error) {
	_, err := (&Workspace{s.conn}).Member(ctx, orgID, userID)
	if err == gatehouse.ErrNotFound {
		return false, nil
	}
	return err == nil, err
}

// EnsureStates implements tasks.Store.
func (s *Tasks) EnsureStates(ctx context.Context, states []tasks.State) error {
	for _, st := range states {
		if _, err := s.w().ExecContext(ctx, `INSERT INTO tasks_states (id, team_id, name, type, color, position, description)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
			st.ID, st.TeamID, st.Name, st.Type, st.Color, st.Position, st.Description); err != nil {
			return err
		}
	}
	return nil
}

// States implements tasks.Store.
func (s *Tasks) States(ctx context.Context, teamID string) ([]tasks.State, error) {
	rows, err := s.r().QueryContext(ctx, `SELECT id, team_id, name, type, color, position, description
		FROM tasks_states WHERE team_id = $1 ORDER BY position, id`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tasks.State
	for rows.Next() {
		var st tasks.State
		if err := rows.Scan(&st.ID, &st.TeamID, &st.Name, &st.Type, &st.Color, &st.Position, &st.Description); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// LockTeam implements tasks.Store: an upsert that changes nothing still
// takes the counter row's lock (PostgreSQL; SQLite writers are serialized).
func (s *Tasks) LockTeam(ctx context.Context, teamID string) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO tasks_counters (team_id, last_number) VALUES ($1, 0)
		ON CONFLICT (team_id) DO UPDATE SET last_number = tasks_counters.last_number`, teamID)
	return err
}

// NextNumber implements tasks.Store: an upsert of the team's counter, so
// concurrent creates in one team queue on its row and never share a number.
func (s *Tasks) NextNumber(ctx context.Context, teamID string) (int64, error) {
	var n int64
	err := s.w().QueryRowContext(ctx, `INSERT INTO tasks_counters (team_id, last_number) VALUES ($1, 1)
		ON CONFLICT (team_id) DO UPDATE SET last_number = tasks_counters.last_number + 1
		RETURNING last_number`, teamID).Scan(&n)
	return n, err
}

func nullInt(p *int) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}

// InsertIssue implements tasks.Store.
func (s *Tasks) InsertIssue(ctx context.Context, i *tasks.Issue) error {
	_, err := s.w().ExecContext(ctx, `INSERT INTO tasks_issues (id, org_id, team_id, number, title, description, parent_id, state_id,
			creator_id, assignee_id, priority, estimate, due_date, position, created_at, updated_at, completed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		i.ID, i.OrgID, i.TeamID, i.Number, i.Title, i.Description, nullString(i.ParentID), i.StateID,
		i.CreatorID, nullString(i.AssigneeID), i.Priority, nullInt(i.Estimate), nullString(i.DueDate), i.Position,
		micros(i.Created), micros(i.Modified), nullMicros(i.CompletedAt))
	return s.db.dialect.translate(err)
}

// UpdateIssue implements tasks.Store.
func (s *Tasks) UpdateIssue(ctx context.Context, i *tasks.Issue) error {
	return affected(s.w().ExecContext(ctx, `UPDATE tasks_issues SET title = $2, description = $3, parent_id = $4, state_id = $5,
			assignee_id = $6, priority = $7, estimate = $8, due_date = $9, updated_at = $10, completed_at = $11
		WHERE id = $1`,
		i.ID, i.Title, i.Description, nullString(i.ParentID), i.StateID, nullString(i.AssigneeID), i.Priority,
		nullInt(i.Estimate), nullString(i.DueDate), micros(i.Modified), nullMicros(i.CompletedAt)))
}

const issueSelect = `SELECT i.id, i.org_id, i.team_id, i.number, i.title, i.description, i.parent_id, i.state_id, i.creator_id,
		i.assignee_id, i.priority, i.estimate, i.due_date, i.position, i.created_at, i.updated_at, i.completed_at, i.deleted_at,
		st.name, st.type, st.color, st.position, st.description, u.name, u.email, u.created_at,
		(SELECT COUNT(*) FROM tasks_issues c WHERE c.parent_id = i.id AND c.deleted_at IS NULL)
	FROM tasks_issues i JOIN tasks_states st ON st.id = i.state_id LEFT JOIN users u ON u.id = i.assignee_id`

func scanIssue(row interface{ Scan(...any) error }) (*tasks.Issue, error) {
	var i tasks.Issue
	var parent, assignee, due, uName, uEmail sql.NullString
	var estimate, completed, deleted, uCreated sql.NullInt64
	var created, modified int64
	err := row.Scan(&i.ID, &i.OrgID, &i.TeamID, &i.Number, &i.Title, &i.Description, &parent, &i.StateID, &i.CreatorID,
		&assignee, &i.Priority, &estimate, &due, &i.Position, &created, &modified, &completed, &deleted,
		&i.State.Name, &i.State.Type, &i.State.Color, &i.State.Position, &i.State.Description, &uName, &uEmail, &uCreated,
		&i.ChildCount)
	if err != nil {
		return nil, err
	}
	i.ParentID, i.AssigneeID, i.DueDate = parent.String, assignee.String, due.String
	if estimate.Valid {
		e := int(estimate.Int64)
		i.Estimate = &e
	}
	i.Created, i.Modified, i.CompletedAt, i.DeletedAt = fromMicros(created), fromMicros(modified), fromNullMicros(completed), fromNullMicros(deleted)
	i.State.ID, i.State.TeamID = i.StateID, i.TeamID
	if assignee.Valid && uName.Valid {
		i.Assignee = &tasks.Person{ID: assignee.String, Name: uName.String, Email: uEmail.String, Created: fromMicros(uCreated.Int64)}
	}
	i.Labels = []tasks.Label{}
	return &i, nil
}

// Issue implements tasks.Store.
func (s *Tasks) Issue(ctx context.Context, orgID, id string) (*tasks.Issue, error) {
	i, err := scanIssue(s.r().QueryRowContext(ctx, issueSelect+` WHERE i.id = $1 AND i.org_id = $2`, id, orgID))
	if err != nil {
		return nil, s.one(err)
	}
	return i, s.fillLabels(ctx, []*tasks.Issue{i}, `il.issue_id = $1`, id)
}

// Issues implements tasks.Store.
func (s *Tasks) Issues(ctx context.Context, orgID string, teams []string, deleted bool) ([]*tasks.Issue, error) {
	where := `i.org_id = $1 AND i.team_id IN (` + placeholders(2, len(teams)) + `) AND i.deleted_at IS NULL`
	if deleted {
		where = `i.org_id = $1 AND i.team_id IN (` + placeholders(2, len(teams)) + `) AND i.deleted_at IS NOT NULL`
	}
	args := []any{orgID}
	for _, t := range teams {
		args = append(args, t)
	}
	rows, err := s.r().QueryContext(ctx, issueSelect+` WHERE `+where+` ORDER BY i.created_at, i.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tasks.Issue{}
	for rows.Next() {
		i, err := scanIssue(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, s.fillLabels(ctx, out, `il.issue_id IN (SELECT i.id FROM tasks_issues i WHERE `+where+`)`, args...)
}

// fillLabels reads the labels of the issues matched by where.
func (s *Tasks) fillLabels(ctx context.Context, issues []*tasks.Issue, where string, args ...any) error {
	if len(issues) == 0 {
		return nil
	}
	byID := make(map[string]*tasks.Issue, len(issues))
	for _, i := range issues {
		byID[i.ID] = i
	}
	rows, err := s.r().QueryContext(ctx, `SELECT il.issue_id, l.id, l.team_id, l.name, l.color
		FROM tasks_issue_labels il JOIN tasks_labels l ON l.id = il.label_id WHERE `+where+` ORDER BY l.name, l.id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var issue string
		var l tasks.Label
		if err := rows.Scan(&issue, &l.ID, &l.TeamID, &l.Name, &l.Color); err != nil {
			return err
		}
		if i := byID[issue]; i != nil {
			i.Labels = append(i.Labels, l)
		}
	}
	return rows.Err()
}

// Subtree implements tasks.Store. UNION (not UNION ALL) stops at a cycle.
func (s *Tasks) Subtree(ctx context.Context, id string) ([]string, error) {
	ids, err := s.column(ctx, `WITH RECURSIVE sub(id) AS (
			SELECT id FROM tasks_issues WHERE parent_id = $1
			UNION SELECT t.id FROM tasks_issues t JOIN sub ON t.parent_id = sub.id)
		SELECT id FROM sub WHERE id <> $1`, id)
	return ids, err
}

// SetDeleted implements tasks.Store.
func (s *Tasks) SetDeleted(ctx context.Context, ids []string, at *time.Time, modified time.Time) error {
	args := []any{nullMicros(at), micros(modified)}
	for _, id := range ids {
		args = append(args, id)
	}
	in := placeholders(3, len(ids))
	if at == nil {
		_, err := s.w().ExecContext(ctx, `UPDATE tasks_issues SET deleted_at = $1, updated_at = $2 WHERE deleted_at IS NOT NULL AND id IN (`+in+`)`, args...)
		return err
	}
	_, err := s.w().ExecContext(ctx, `UPDATE tasks_issues SET deleted_at = $1, updated_at = $2 WHERE deleted_at IS NULL AND id IN (`+in+`)`, args...)
	return err
}

// EnsureLabels implements tasks.Store.
func (s *Tasks) EnsureLabels(ctx context.Context, labels []tasks.Label) ([]tasks.Label, error) {
	out := make([]tasks.Label, 0, len(labels))
	for _, l := range labels {
		if _, err := s.w().ExecContext(ctx, `INSERT INTO tasks_labels (id, team_id, name, color) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			l.ID, l.TeamID, l.Name, l.Color); err != nil {
			return nil, err
		}
		var got tasks.Label
		if err := s.w().QueryRowContext(ctx, `SELECT id, team_id, name, color FROM tasks_labels WHERE team_id = $1 AND lower(name) = lower($2)`, l.TeamID, l.Name).
			Scan(&got.ID, &got.TeamID, &got.Name, &got.Color); err != nil {
			return nil, err
		}
		out = append(out, got)
	}
	return out, nil
}

// SetIssueLabels implements tasks.Store.
func (s *Tasks) SetIssueLabels(ctx context.Context, issueID string, labelIDs []string) error {
	if _, err := s.w().ExecContext(ctx, `DELETE FROM tasks_issue_labels WHERE issue_id = $1`, issueID); err != nil {
		return err
	}
	for _, l := range labelIDs {
		if _, err := s.w().ExecContext(ctx, `INSERT INTO tasks_issue_labels (issue_id, label_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, issueID, l); err != nil {
			return err
		}
	}
	return nil
}
