-- +goose Up
-- A SAML connection's own service-provider keys (issue 27): the RSA keys
-- and self-signed certificates that sign our AuthnRequests and decrypt
-- the assertions the identity provider encrypts to us, sealed (AES-GCM,
-- bound to the connection id) as one base64 value. The first key signs;
-- every key is published and decrypts (a second one is staged before a
-- rotation). '' on connections made before: their keys are made on first
-- use.
ALTER TABLE sso_connections ADD COLUMN saml_sp_keys TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sso_connections DROP COLUMN saml_sp_keys;
