-- +goose Up
-- One TOTP factor per account (issue 23 item 7): concurrent enrolments
-- could each insert one, and each be confirmed. The rows an account has
-- beyond one are dropped first: the factor sign-ins check is kept (the
-- oldest confirmed one, as ConfirmedFactor orders them), else the newest
-- enrolment; the others were never checked or never confirmed.
DELETE FROM mfa_factors
WHERE kind = 'totp' AND EXISTS (
    SELECT 1 FROM mfa_factors k
    WHERE k.user_id = mfa_factors.user_id AND k.kind = 'totp' AND k.id <> mfa_factors.id AND (
        (k.confirmed_at IS NOT NULL AND mfa_factors.confirmed_at IS NULL)
        OR (k.confirmed_at IS NOT NULL AND mfa_factors.confirmed_at IS NOT NULL
            AND (k.created_at < mfa_factors.created_at OR (k.created_at = mfa_factors.created_at AND k.id < mfa_factors.id)))
        OR (k.confirmed_at IS NULL AND mfa_factors.confirmed_at IS NULL
            AND (k.created_at > mfa_factors.created_at OR (k.created_at = mfa_factors.created_at AND k.id > mfa_factors.id)))
    )
);
CREATE UNIQUE INDEX mfa_factors_one_totp ON mfa_factors (user_id) WHERE kind = 'totp';

-- +goose Down
DROP INDEX mfa_factors_one_totp;
