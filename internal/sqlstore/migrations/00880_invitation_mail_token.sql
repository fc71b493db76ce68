-- +goose Up
-- An email invitation's second secret (issue 30 item 4): the token of the
-- link mailed to the invitee, hashed. The inviter holds the other one (the
-- URL of the creation answer); accepting with this one also confirms the
-- address, since only its mailbox has it. NULL for link invitations and
-- those made before.
ALTER TABLE invitations ADD COLUMN mail_token_hash TEXT;
CREATE UNIQUE INDEX invitations_mail_token ON invitations (mail_token_hash);

-- +goose Down
DROP INDEX invitations_mail_token;
ALTER TABLE invitations DROP COLUMN mail_token_hash;
