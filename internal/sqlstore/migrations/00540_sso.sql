-- +goose Up
-- Enterprise SSO per workspace (issue 27): a team org's OpenID Connect
-- connections. client_secret is sealed (internal/seal, purpose "sso",
-- bound to the connection id) and base64-encoded; domains is a JSON array
-- of the org's verified domains the connection serves, each also a row of
-- sso_domains, whose primary key gives a domain one connection at most.
CREATE TABLE sso_connections (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL,
    name          TEXT NOT NULL,
    issuer        TEXT NOT NULL,
    client_id     TEXT NOT NULL,
    client_secret TEXT NOT NULL,
    scopes        TEXT NOT NULL,
    default_role  TEXT NOT NULL,
    enforce       BOOLEAN NOT NULL,
    domains       TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX sso_connections_org ON sso_connections (org_id, created_at);

CREATE TABLE sso_domains (
    domain        TEXT PRIMARY KEY,
    connection_id TEXT NOT NULL
);
CREATE INDEX sso_domains_connection ON sso_domains (connection_id);

-- A sign-in under way: the hash of its state, the hash of the browser
-- cookie it is bound to, its nonce and PKCE verifier; deleted when used.
CREATE TABLE sso_flows (
    state_hash    TEXT PRIMARY KEY,
    connection_id TEXT NOT NULL,
    browser_hash  TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    verifier      TEXT NOT NULL,
    next_path     TEXT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX sso_flows_expiry ON sso_flows (expires_at);

-- An upstream identity (the issuer's subject) linked to an account, and
-- the links waiting for the person to prove the account first.
CREATE TABLE sso_links (
    connection_id TEXT NOT NULL,
    subject       TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (connection_id, subject)
);
CREATE INDEX sso_links_user ON sso_links (user_id);

CREATE TABLE sso_pending_links (
    token_hash    TEXT PRIMARY KEY,
    connection_id TEXT NOT NULL,
    subject       TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    expires_at    BIGINT NOT NULL
);

-- +goose Down
DROP TABLE sso_pending_links;
DROP TABLE sso_links;
DROP TABLE sso_flows;
DROP TABLE sso_domains;
DROP TABLE sso_connections;
