-- +goose Up
-- The Tasks tool (TOOLS.md): issues of the org's teams, their workflow
-- states and labels. Issues are soft-deleted (Recently Deleted) and
-- restored with their whole sub-issue subtree.

CREATE TABLE tasks_states (
    id          TEXT PRIMARY KEY,
    team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    type        TEXT NOT NULL,
    color       TEXT NOT NULL,
    position    DOUBLE PRECISION NOT NULL,
    description TEXT NOT NULL DEFAULT ''
);
-- One default state per type: creating them on first use is idempotent.
CREATE UNIQUE INDEX tasks_states_type ON tasks_states (team_id, type);

-- The last issue number given out per team; numbers are never reused.
CREATE TABLE tasks_counters (
    team_id     TEXT PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    last_number BIGINT NOT NULL
);

CREATE TABLE tasks_issues (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL,
    team_id      TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    number       BIGINT NOT NULL,
    title        TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    parent_id    TEXT,
    state_id     TEXT NOT NULL REFERENCES tasks_states (id),
    creator_id   TEXT NOT NULL,
    assignee_id  TEXT,
    priority     INTEGER NOT NULL DEFAULT 0,
    estimate     INTEGER,
    due_date     TEXT,
    position     DOUBLE PRECISION NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    completed_at BIGINT,
    deleted_at   BIGINT
);
CREATE UNIQUE INDEX tasks_issues_number ON tasks_issues (team_id, number);
CREATE INDEX tasks_issues_parent ON tasks_issues (parent_id);

CREATE TABLE tasks_labels (
    id      TEXT PRIMARY KEY,
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    color   TEXT NOT NULL
);
-- Label names are matched without regard to case.
CREATE UNIQUE INDEX tasks_labels_name ON tasks_labels (team_id, lower(name));

CREATE TABLE tasks_issue_labels (
    issue_id TEXT NOT NULL REFERENCES tasks_issues (id) ON DELETE CASCADE,
    label_id TEXT NOT NULL REFERENCES tasks_labels (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, label_id)
);

-- +goose Down
DROP TABLE tasks_issue_labels;
DROP TABLE tasks_labels;
DROP TABLE tasks_issues;
DROP TABLE tasks_counters;
DROP TABLE tasks_states;
