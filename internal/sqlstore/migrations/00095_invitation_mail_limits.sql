-- +goose Up
-- Invitation mail limits (issue 10 item 4) count the email invitations an
-- account, and an org, created in the last 24 hours. The rows are the
-- record (several instances share it); these partial indexes keep both
-- counts to an index range.
CREATE INDEX invitations_mail_by_inviter ON invitations (inviter_id, created_at) WHERE kind = 'email';
CREATE INDEX invitations_mail_by_org ON invitations (org_id, created_at) WHERE kind = 'email';

-- +goose Down
DROP INDEX invitations_mail_by_org;
DROP INDEX invitations_mail_by_inviter;
