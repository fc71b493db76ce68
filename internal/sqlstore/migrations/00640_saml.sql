-- +goose Up
-- SAML 2.0 connections (issue 27) beside the OpenID Connect ones: a
-- connection's protocol ('oidc' or 'saml') and, for SAML, its identity
-- provider as JSON (entity id, sign-on URL, signing certificates, the
-- metadata URL it came from, whether IdP-initiated sign-in is allowed;
-- nothing secret). The issuer column holds the IdP's entity id.
ALTER TABLE sso_connections ADD COLUMN protocol TEXT NOT NULL DEFAULT 'oidc';
ALTER TABLE sso_connections ADD COLUMN saml TEXT NOT NULL DEFAULT '';

-- The ids of the assertions a connection accepted, kept until they
-- expire: the primary key makes each one single use on every instance.
CREATE TABLE sso_saml_assertions (
    connection_id TEXT NOT NULL,
    assertion_id  TEXT NOT NULL,
    expires_at    BIGINT NOT NULL,
    PRIMARY KEY (connection_id, assertion_id)
);
CREATE INDEX sso_saml_assertions_expiry ON sso_saml_assertions (expires_at);

-- +goose Down
DROP TABLE sso_saml_assertions;
ALTER TABLE sso_connections DROP COLUMN saml;
ALTER TABLE sso_connections DROP COLUMN protocol;
