-- +goose Up
-- Mail to strangers is counted (issue 24 item 1): one row per mail of a
-- counted kind (maillimit.Sign, FormConfirmation, FormAutoresponse), kept
-- apart from the objects that caused it, so deleting a destination or a
-- document, or making a new form, resets no count. sender_id is the
-- account that sent it (NULL for a form's autoresponse). Rows older than
-- two days are pruned as a workspace records new ones.
CREATE TABLE mail_sent (
    kind      TEXT NOT NULL,
    org_id    TEXT NOT NULL,
    sender_id TEXT,
    sent_at   BIGINT NOT NULL
);
CREATE INDEX mail_sent_by_org ON mail_sent (kind, org_id, sent_at);
CREATE INDEX mail_sent_by_sender ON mail_sent (kind, sender_id, sent_at) WHERE sender_id IS NOT NULL;

-- The mails already sent count from the start.
INSERT INTO mail_sent (kind, org_id, sender_id, sent_at)
    SELECT 'form_confirmation', org_id, NULL, mailed_at FROM form_recipients WHERE mailed_at IS NOT NULL;
INSERT INTO mail_sent (kind, org_id, sender_id, sent_at)
    SELECT 'form_autoresponse', f.org_id, NULL, s.autoresponded_at
    FROM form_submissions s JOIN forms f ON f.id = s.form_id WHERE s.autoresponded_at IS NOT NULL;

-- Sign's reminder rounds are capped (sign.MaxReminderRounds) and a round
-- past the mail limit waits for room (remind_after).
ALTER TABLE sign_documents ADD COLUMN reminder_rounds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sign_documents ADD COLUMN remind_after BIGINT;

-- +goose Down
ALTER TABLE sign_documents DROP COLUMN remind_after;
ALTER TABLE sign_documents DROP COLUMN reminder_rounds;
DROP INDEX mail_sent_by_sender;
DROP INDEX mail_sent_by_org;
DROP TABLE mail_sent;
