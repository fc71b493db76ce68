-- +goose Up
-- The Sign tool (TOOLS.md): documents with their PDF, recipients and field
-- placements. The PDF is kept base64 in a text column (one type on both
-- databases). A recipient's signing token is a capability the owner can
-- copy again (the signing link), so it is kept as issued.

CREATE TABLE sign_documents (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    owner_id     TEXT NOT NULL,
    name         TEXT NOT NULL,
    message      TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL,
    file         TEXT NOT NULL,
    size         BIGINT NOT NULL,
    pages        INTEGER NOT NULL,
    void_reason  TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    sent_at      BIGINT,
    completed_at BIGINT,
    voided_at    BIGINT,
    declined_at  BIGINT
);
CREATE INDEX sign_documents_org ON sign_documents (org_id, created_at);

CREATE TABLE sign_recipients (
    id             TEXT PRIMARY KEY,
    document_id    TEXT NOT NULL REFERENCES sign_documents (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    email          TEXT NOT NULL,
    role           TEXT NOT NULL,
    order_index    INTEGER NOT NULL,
    status         TEXT NOT NULL,
    token          TEXT NOT NULL,
    viewed_at      BIGINT,
    signed_at      BIGINT,
    declined_at    BIGINT,
    decline_reason TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX sign_recipients_token ON sign_recipients (token);
CREATE INDEX sign_recipients_document ON sign_recipients (document_id, order_index);

CREATE TABLE sign_fields (
    id           TEXT PRIMARY KEY,
    document_id  TEXT NOT NULL REFERENCES sign_documents (id) ON DELETE CASCADE,
    recipient_id TEXT,
    type         TEXT NOT NULL,
    page         INTEGER NOT NULL,
    x            DOUBLE PRECISION NOT NULL,
    y            DOUBLE PRECISION NOT NULL,
    width        DOUBLE PRECISION NOT NULL,
    height       DOUBLE PRECISION NOT NULL,
    required     BOOLEAN NOT NULL,
    label        TEXT NOT NULL DEFAULT '',
    value        TEXT,
    position     INTEGER NOT NULL
);
CREATE INDEX sign_fields_document ON sign_fields (document_id, position);

-- +goose Down
DROP TABLE sign_fields;
DROP TABLE sign_recipients;
DROP TABLE sign_documents;
