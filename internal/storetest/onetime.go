package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/testenv"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// testOneTimeSecrets races racers callers for each one-time secret: one
// uses it, the others get ErrNotFound, and so does anyone after them.
// (Refresh tokens race in testRotateRefresh.)
func testOneTimeSecrets(t *testing.T, s Stores) {
	for _, purpose := range []string{identity.PurposeMagicLink, identity.PurposeVerifyEmail} {
		t.Run("email token "+purpose, func(t *testing.T) { testEmailToken(t, s, purpose) })
	}
	t.Run("email invitation", func(t *testing.T) { testEmailInvitation(t, s) })
	t.Run("confirm email", func(t *testing.T) { testConfirmEmail(t, s) })
	t.Run("authorization code", func(t *testing.T) { testAuthorizationCode(t, s) })
	t.Run("device code", func(t *testing.T) { testDeviceCode(t, s) })
	t.Run("forms destination confirmation", func(t *testing.T) { testRecipientConfirmation(t, s) })
	t.Run("client assertion id", func(t *testing.T) { testClientAssertion(t, s) })
}

func testEmailToken(t *testing.T, s Stores, purpose string) {
	ctx := context.Background()
	u := newUser(t, s)
	at := now()
	tok := &identity.EmailToken{Hash: newID(), Purpose: purpose, Email: u.Email, UserID: u.ID, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	wantErr(t, "CreateEmailToken", s.Identity.CreateEmailToken(ctx, tok), nil)
	other := identity.PurposeVerifyEmail
	if purpose == other {
		other = identity.PurposeMagicLink
	}
	_, err := s.Identity.UseEmailToken(ctx, tok.Hash, other, at)
	wantErr(t, "use the token for another purpose", err, gatehouse.ErrNotFound)
	_, err = s.Identity.UseEmailToken(ctx, tok.Hash, purpose, tok.ExpiresAt)
	wantErr(t, "use the token when it expires", err, gatehouse.ErrNotFound)

	race(t, racers, func(int) error {
		got, err := s.Identity.UseEmailToken(ctx, tok.Hash, purpose, at)
		if err == nil && (got.Email != tok.Email || got.UserID != u.ID || got.UsedAt == nil) {
			t.Errorf("used token = %+v; want %+v used", got, tok)
		}
		return err
	})
	_, err = s.Identity.UseEmailToken(ctx, tok.Hash, purpose, at)
	wantErr(t, "use the token again", err, gatehouse.ErrNotFound)
}

func testEmailInvitation(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	org := newOrg(t, s, u, workspace.OrgTeam)
	at := now()
	expires := at.Add(time.Hour)
	inv := &workspace.Invitation{ID: newID(), OrgID: org.ID, Kind: "email", Role: workspace.RoleMember, Email: "invitee-" + newID() + "@example.com",
		TokenHash: newID(), MailTokenHash: newID(), InviterID: u.ID, CreatedAt: at, ExpiresAt: &expires}
	wantErr(t, "CreateInvitation", s.Identity.CreateInvitation(ctx, inv), nil)
	wantErr(t, "use the invitation when it expires", s.Identity.UseInvitation(ctx, inv.ID, expires), gatehouse.ErrNotFound)

	race(t, racers, func(int) error { return s.Identity.UseInvitation(ctx, inv.ID, at) })
	wantErr(t, "use the invitation again", s.Identity.UseInvitation(ctx, inv.ID, at), gatehouse.ErrNotFound)
	if got, err := s.Identity.InvitationByHash(ctx, inv.TokenHash); err != nil || got.UsedAt == nil {
		t.Errorf("used invitation = %+v, %v; want UsedAt set", got, err)
	}
	// Either secret finds it; ByMail says which.
	for _, c := range []struct {
		hash   string
		byMail bool
	}{{inv.TokenHash, false}, {inv.MailTokenHash, true}} {
		if got, err := s.Identity.InvitationByHash(ctx, c.hash); err != nil || got.ID != inv.ID || got.ByMail != c.byMail || got.MailTokenHash != inv.MailTokenHash {
			t.Errorf("InvitationByHash(%s) = %+v, %v; want %s with ByMail %v", c.hash, got, err, inv.ID, c.byMail)
		}
	}

	revoked := *inv
	revoked.ID, revoked.TokenHash, revoked.MailTokenHash = newID(), newID(), newID()
	wantErr(t, "CreateInvitation", s.Identity.CreateInvitation(ctx, &revoked), nil)
	wantErr(t, "RevokeInvitation", s.Identity.RevokeInvitation(ctx, org.ID, revoked.ID, at), nil)
	wantErr(t, "use a revoked invitation", s.Identity.UseInvitation(ctx, revoked.ID, at), gatehouse.ErrNotFound)
}

func testAuthorizationCode(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	org := newOrg(t, s, u, workspace.OrgTeam)
	at := now()
	g := &identity.Grant{ID: newID(), UserID: u.ID, ClientID: "client-" + newID(), ClientName: "Client", OrgID: org.ID, CreatedAt: at}
	wantErr(t, "CreateGrant", s.Identity.CreateGrant(ctx, g), nil)
	code := &oauth.Code{Hash: newID(), GrantID: g.ID, ClientID: g.ClientID, RedirectURI: "https://client.example/cb",
		CodeChallenge: "challenge", CreatedAt: at, ExpiresAt: at.Add(oauth.CodeTTL)}
	wantErr(t, "CreateCode", s.OAuth.CreateCode(ctx, code), nil)
	_, err := s.OAuth.UseCode(ctx, code.Hash, code.ExpiresAt)
	wantErr(t, "use the code when it expires", err, gatehouse.ErrNotFound)

	race(t, racers, func(int) error {
		got, err := s.OAuth.UseCode(ctx, code.Hash, at)
		if err == nil && (got.GrantID != g.ID || got.UsedAt == nil) {
			t.Errorf("used code = %+v; want grant %s, UsedAt set", got, g.ID)
		}
		return err
	})
	_, err = s.OAuth.UseCode(ctx, code.Hash, at)
	wantErr(t, "use the code again", err, gatehouse.ErrNotFound)
}

// testDeviceCode races the approvals of one user code, then the exchanges
// of the approved device code.
func testDeviceCode(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	at := now()
	d := &oauth.DeviceCode{DeviceHash: newID(), UserHash: newID(), ClientID: "client-" + newID(), Interval: oauth.DefaultInterval,
		Status: oauth.DevicePending, CreatedAt: at, ExpiresAt: at.Add(oauth.DeviceCodeTTL)}
	wantErr(t, "CreateDeviceCode", s.OAuth.CreateDeviceCode(ctx, d), nil)
	_, err := s.OAuth.UseDevice(ctx, d.DeviceHash)
	wantErr(t, "exchange a pending device code", err, gatehouse.ErrNotFound)

	race(t, racers, func(int) error { return s.OAuth.DecideDevice(ctx, d.UserHash, oauth.DeviceApproved, u.ID, "", at) })
	wantErr(t, "deny an approved device code", s.OAuth.DecideDevice(ctx, d.UserHash, oauth.DeviceDenied, u.ID, "", at), gatehouse.ErrNotFound)

	race(t, racers, func(int) error {
		got, err := s.OAuth.UseDevice(ctx, d.DeviceHash)
		if err == nil && (got.Status != oauth.DeviceUsed || got.UserID != u.ID) {
			t.Errorf("exchanged device code = %+v; want used, approved by %s", got, u.ID)
		}
		return err
	})
	_, err = s.OAuth.UseDevice(ctx, d.DeviceHash)
	wantErr(t, "exchange the device code again", err, gatehouse.ErrNotFound)
}

func testRecipientConfirmation(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	org := newOrg(t, s, u, workspace.OrgTeam)
	f := newForm(t, s, org, u)
	at := now()
	d := &forms.Destination{ID: newID(), FormID: f.ID, Type: "email", To: []string{"inbox@example.com"}, Created: at}
	wantErr(t, "AddDestination", s.Forms.AddDestination(ctx, d), nil)
	r := &forms.Recipient{DestinationID: d.ID, Email: "inbox@example.com", OrgID: org.ID, TokenHash: newID(), ExpiresAt: at.Add(time.Hour), MailedAt: &at}
	wantErr(t, "AddRecipient", s.Forms.AddRecipient(ctx, r), nil)
	_, err := s.Forms.ConfirmRecipient(ctx, r.TokenHash, r.ExpiresAt)
	wantErr(t, "confirm when the link expires", err, gatehouse.ErrNotFound)

	race(t, racers, func(int) error {
		got, err := s.Forms.ConfirmRecipient(ctx, r.TokenHash, at)
		if err == nil && (got.FormID != f.ID || got.Email != r.Email) {
			t.Errorf("confirmed recipient = %+v; want %s of form %s", got, r.Email, f.ID)
		}
		return err
	})
	_, err = s.Forms.ConfirmRecipient(ctx, r.TokenHash, at)
	wantErr(t, "confirm again", err, gatehouse.ErrNotFound)
	ds, err := s.Forms.ListDestinations(ctx, f.ID)
	if err != nil || len(ds) != 1 || len(ds[0].Confirmed) != 1 || ds[0].Confirmed[0] != r.Email {
		t.Errorf("destinations = %+v, %v; want one with %s confirmed", ds, err, r.Email)
	}
}

// testClientAssertion races the uses of one client assertion id: exactly
// one records it, the others (and any later use before it expires) get
// ErrConflict; another client may use the same jti; an expired id is
// pruned and may be used again.
func testClientAssertion(t *testing.T, s Stores) {
	ctx := context.Background()
	at := now()
	client, jti := "app_"+newID(), newID()
	exp := at.Add(time.Minute)
	errs := make([]error, racers)
	testenv.AtOnce(racers, func(i int) { errs[i] = s.OAuth.UseAssertion(ctx, client, jti, exp, at) })
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, gatehouse.ErrConflict):
			t.Errorf("call %d = %v; want nil or ErrConflict", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d concurrent uses succeeded; want exactly 1", wins, racers)
	}
	wantErr(t, "use again", s.OAuth.UseAssertion(ctx, client, jti, exp, at.Add(30*time.Second)), gatehouse.ErrConflict)
	wantErr(t, "another client's jti", s.OAuth.UseAssertion(ctx, "app_"+newID(), jti, exp, at), nil)
	wantErr(t, "after it expired", s.OAuth.UseAssertion(ctx, client, jti, exp.Add(time.Minute), exp.Add(time.Second)), nil)
}

// testConfirmEmail: ConfirmEmail verifies an address only while it is
// still the one expected and unverified.
func testConfirmEmail(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	u.EmailVerified = false
	wantErr(t, "UpdateUser", s.Identity.UpdateUser(ctx, u), nil)
	for _, c := range []struct {
		name, key string
		want      bool
	}{{"another address", "other-" + u.EmailKey, false}, {"its address", u.EmailKey, true}, {"again", u.EmailKey, false}} {
		if ok, err := s.Identity.ConfirmEmail(ctx, u.ID, c.key, now()); err != nil || ok != c.want {
			t.Errorf("%s: ConfirmEmail = %v, %v; want %v", c.name, ok, err, c.want)
		}
	}
	if got, err := s.Identity.UserByID(ctx, u.ID); err != nil || !got.EmailVerified {
		t.Errorf("user after ConfirmEmail = %+v, %v; want verified", got, err)
	}
}
