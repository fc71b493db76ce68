-- +goose Up
-- A workspace's policy for identity assertion grants (ID-JAG, issue 27
-- item 4), as JSON: which connections' assertions it accepts, for which
-- clients, resources and scopes, and which it issues. No row: all off.
-- The single-use jti of accepted assertions goes to sso_saml_assertions
-- under "idjag:" and the issuer.
CREATE TABLE idjag_policies (
    org_id     TEXT PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    policy     TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The token endpoint finds an assertion's connections by its issuer.
CREATE INDEX sso_connections_issuer ON sso_connections (issuer);

-- +goose Down
DROP INDEX sso_connections_issuer;
DROP TABLE idjag_policies;
