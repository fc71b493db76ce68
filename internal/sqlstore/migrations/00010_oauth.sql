-- +goose Up
-- The OAuth 2.1 authorization server (issue 6). Codes are secrets: stored as
-- SHA-256 hex only, made single use by conditional UPDATE like email_tokens.

-- Authorization codes: valid 60 s, single use. A second presentation finds
-- used_at set and revokes the grant the first one was issued under.
CREATE TABLE oauth_codes (
    code_hash      TEXT PRIMARY KEY,
    grant_id       TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    client_id      TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL DEFAULT '',
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    used_at        BIGINT
);
CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);

-- Device authorizations (RFC 8628). The device code and the user code are
-- both stored hashed; status moves pending -> approved | denied -> used.
CREATE TABLE oauth_device_codes (
    device_hash  TEXT PRIMARY KEY,
    user_hash    TEXT NOT NULL,
    client_id    TEXT NOT NULL,
    client_name  TEXT NOT NULL DEFAULT '',
    scope        TEXT NOT NULL DEFAULT '',
    resource     TEXT NOT NULL DEFAULT '',
    interval_s   INTEGER NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'used')),
    user_id      TEXT REFERENCES users (id) ON DELETE CASCADE,
    grant_id     TEXT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    last_poll_at BIGINT
);
CREATE UNIQUE INDEX oauth_device_codes_user ON oauth_device_codes (user_hash);

CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

-- +goose Down
DROP INDEX oauth_grants_client;
DROP TABLE oauth_device_codes;
DROP TABLE oauth_codes;
