-- +goose Up
-- One schema for SQLite and PostgreSQL. Instants are unix microseconds in
-- BIGINT columns (drivers disagree on time text); ids are UUID strings;
-- secrets are stored only as SHA-256 hex digests.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    email          TEXT NOT NULL,
    name           TEXT NOT NULL DEFAULT '',
    avatar_url     TEXT NOT NULL DEFAULT '',
    password_hash  TEXT NOT NULL DEFAULT '',
    email_verified BOOLEAN NOT NULL DEFAULT FALSE,
    default_org_id TEXT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
-- Emails are stored lowercased, so this index is the case-insensitive rule.
CREATE UNIQUE INDEX users_email ON users (email);

CREATE TABLE orgs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    slug        TEXT NOT NULL,
    avatar_url  TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL CHECK (kind IN ('personal', 'team')),
    owner_id    TEXT,
    created_at  BIGINT NOT NULL,
    deleted_at  BIGINT
);
CREATE UNIQUE INDEX orgs_slug ON orgs (slug) WHERE deleted_at IS NULL;
-- At most one live personal org per user, even when two requests race to create it.
CREATE UNIQUE INDEX orgs_personal ON orgs (owner_id) WHERE kind = 'personal' AND deleted_at IS NULL;

CREATE TABLE memberships (
    org_id    TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'billing', 'member')),
    joined_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);
CREATE INDEX memberships_org_joined ON memberships (org_id, joined_at);

-- A row exists only for a tool whose state was set; no row means enabled.
CREATE TABLE org_tools (
    org_id  TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    tool    TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    PRIMARY KEY (org_id, tool)
);

-- A sign-in session: a chain of refresh tokens, one of them current.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    via          TEXT NOT NULL,
    grant_id     TEXT,
    org_id       TEXT,
    user_agent   TEXT NOT NULL DEFAULT '',
    ip           TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX sessions_user ON sessions (user_id, created_at);
CREATE INDEX sessions_grant ON sessions (grant_id);

CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    rotated_at BIGINT
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);

-- Single-use emailed secrets: magic links and email confirmations.
CREATE TABLE email_tokens (
    token_hash TEXT PRIMARY KEY,
    purpose    TEXT NOT NULL CHECK (purpose IN ('magic_link', 'verify_email')),
    email      TEXT NOT NULL,
    user_id    TEXT REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX email_tokens_user ON email_tokens (user_id, purpose, created_at);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('user', 'org')),
    user_id      TEXT REFERENCES users (id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    role         TEXT,
    tools        TEXT,
    prefix       TEXT NOT NULL,
    key_hash     TEXT NOT NULL,
    created_by   TEXT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys (key_hash);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at);
CREATE INDEX api_keys_org ON api_keys (org_id, kind, created_at);

CREATE TABLE invitations (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('email', 'link')),
    role        TEXT NOT NULL,
    email       TEXT,
    token_hash  TEXT NOT NULL,
    inviter_id  TEXT,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT,
    used_at     BIGINT,
    revoked_at  BIGINT
);
CREATE UNIQUE INDEX invitations_token ON invitations (token_hash);
CREATE INDEX invitations_org ON invitations (org_id, created_at);

CREATE TABLE teams (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    deleted_at  BIGINT
);
CREATE INDEX teams_org ON teams (org_id, created_at);

CREATE TABLE team_members (
    team_id   TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('lead', 'member')),
    joined_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

-- The platform-wide audit log. No foreign keys: entries outlive their actors.
CREATE TABLE audit_log (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    action      TEXT NOT NULL,
    actor_id    TEXT NOT NULL DEFAULT '',
    target_type TEXT NOT NULL DEFAULT '',
    target_id   TEXT NOT NULL DEFAULT '',
    meta        TEXT NOT NULL DEFAULT '{}',
    at          BIGINT NOT NULL
);
CREATE INDEX audit_org_at ON audit_log (org_id, at);
CREATE INDEX audit_org_tool_at ON audit_log (org_id, tool, at);
CREATE INDEX audit_org_action_at ON audit_log (org_id, action, at);

CREATE TABLE domains (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    domain      TEXT NOT NULL,
    mode        TEXT NOT NULL CHECK (mode IN ('suggest', 'auto_join')),
    token       TEXT NOT NULL,
    verified_at BIGINT,
    created_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX domains_org_domain ON domains (org_id, domain);
-- A domain is verified by at most one org.
CREATE UNIQUE INDEX domains_verified ON domains (domain) WHERE verified_at IS NOT NULL;

CREATE TABLE oauth_clients (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL DEFAULT '',
    redirect_uris TEXT NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    BIGINT NOT NULL
);

CREATE TABLE oauth_grants (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id   TEXT NOT NULL,
    client_name TEXT NOT NULL DEFAULT '',
    org_id      TEXT NOT NULL,
    scope       TEXT NOT NULL DEFAULT '',
    resource    TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id, created_at);

-- +goose Down
DROP TABLE oauth_grants;
DROP TABLE oauth_clients;
DROP TABLE domains;
DROP TABLE audit_log;
DROP TABLE team_members;
DROP TABLE teams;
DROP TABLE invitations;
DROP TABLE api_keys;
DROP TABLE email_tokens;
DROP TABLE refresh_tokens;
DROP TABLE sessions;
DROP TABLE org_tools;
DROP TABLE memberships;
DROP TABLE orgs;
DROP TABLE users;
DROP TABLE settings;
