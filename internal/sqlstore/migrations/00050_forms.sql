-- +goose Up
-- The Forms tool (TOOLS.md): forms of a workspace, their public
-- submissions, and where each submission is mailed.

CREATE TABLE forms (
    id                    TEXT PRIMARY KEY,
    org_id                TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name                  TEXT NOT NULL,
    autoresponder_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    autoresponder_subject TEXT NOT NULL DEFAULT '',
    autoresponder_body    TEXT NOT NULL DEFAULT '',
    created_by            TEXT NOT NULL,
    created_at            BIGINT NOT NULL
);
CREATE INDEX forms_org ON forms (org_id, created_at);

CREATE TABLE form_submissions (
    id         TEXT PRIMARY KEY,
    form_id    TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    data       TEXT NOT NULL,
    spam       BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX form_submissions_form ON form_submissions (form_id, created_at);

CREATE TABLE form_destinations (
    id         TEXT PRIMARY KEY,
    form_id    TEXT NOT NULL REFERENCES forms (id) ON DELETE CASCADE,
    type       TEXT NOT NULL,
    config     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX form_destinations_form ON form_destinations (form_id, created_at);

-- +goose Down
DROP TABLE form_destinations;
DROP TABLE form_submissions;
DROP TABLE forms;
