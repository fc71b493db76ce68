-- +goose Up
-- OpenID Connect (issue 25 item 2). The nonce of an authorization request
-- travels with its code into the ID token of the exchange. oidc_grants
-- holds, for a grant whose scope has openid (and only then), how the
-- person had authenticated in the browser session that approved it: the
-- auth_time, amr (a JSON array) and acr of every ID token issued under the
-- grant (the code or device exchange and each refresh), which outlive the
-- code and device rows (removed a day after they expire).
ALTER TABLE oauth_codes ADD COLUMN nonce TEXT NOT NULL DEFAULT '';

CREATE TABLE oidc_grants (
    grant_id  TEXT PRIMARY KEY REFERENCES oauth_grants (id) ON DELETE CASCADE,
    auth_time BIGINT NOT NULL,
    amr       TEXT NOT NULL DEFAULT '[]',
    acr       TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE oidc_grants;
ALTER TABLE oauth_codes DROP COLUMN nonce;
