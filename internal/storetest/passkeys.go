package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// newPasskey stores a passkey of u with a fresh credential id.
func newPasskey(t *testing.T, s Stores, u *gatehouse.User) *identity.Passkey {
	t.Helper()
	pk := &identity.Passkey{ID: newID(), UserID: u.ID, CredentialID: []byte(newID()), PublicKey: []byte("cose"),
		Transports: []string{"internal", "hybrid"}, AAGUID: make([]byte, 16), Attestation: "none", Name: "Key", CreatedAt: now()}
	wantErr(t, "CreatePasskey", s.Identity.CreatePasskey(context.Background(), pk), nil)
	return pk
}

// testPasskeyCeremony: a ceremony is taken once by concurrent callers,
// never for another kind, and not once it expires.
func testPasskeyCeremony(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	at := now()
	c := &identity.Ceremony{IDHash: newID(), Kind: identity.CeremonyRegister, UserID: u.ID, Session: []byte(`{"challenge":"x"}`), ExpiresAt: at.Add(time.Minute)}
	wantErr(t, "CreateCeremony", s.Identity.CreateCeremony(ctx, c), nil)
	_, err := s.Identity.TakeCeremony(ctx, c.IDHash, identity.CeremonyLogin, at)
	wantErr(t, "take it as another kind", err, gatehouse.ErrNotFound)
	_, err = s.Identity.TakeCeremony(ctx, c.IDHash, c.Kind, c.ExpiresAt)
	wantErr(t, "take it when it expires", err, gatehouse.ErrNotFound)
	race(t, racers, func(int) error {
		got, err := s.Identity.TakeCeremony(ctx, c.IDHash, c.Kind, at)
		if err == nil && (got.UserID != u.ID || string(got.Session) != string(c.Session)) {
			t.Errorf("took %+v; want %+v", got, c)
		}
		return err
	})
	_, err = s.Identity.TakeCeremony(ctx, c.IDHash, c.Kind, at)
	wantErr(t, "take it again", err, gatehouse.ErrNotFound)

	usernameless := &identity.Ceremony{IDHash: newID(), Kind: identity.CeremonyLogin, Session: []byte(`{}`), ExpiresAt: at.Add(time.Minute)}
	wantErr(t, "CreateCeremony", s.Identity.CreateCeremony(ctx, usernameless), nil)
	wantErr(t, "PurgeCeremonies", s.Identity.PurgeCeremonies(ctx, usernameless.ExpiresAt), nil)
	_, err = s.Identity.TakeCeremony(ctx, usernameless.IDHash, usernameless.Kind, at)
	wantErr(t, "take a purged ceremony", err, gatehouse.ErrNotFound)
}

// testPasskeyCeremonyUse: a ceremony is used once by concurrent callers,
// not as another kind nor once it expires; given a session, only a
// ceremony of no account holding exactly it is used, and a mismatch
// leaves it in place.
func testPasskeyCeremonyUse(t *testing.T, s Stores) {
	ctx := context.Background()
	at := now()
	c := &identity.Ceremony{IDHash: newID(), Kind: identity.CeremonyLogin, Session: []byte(`{"challenge":"x"}`), ExpiresAt: at.Add(time.Minute)}
	wantErr(t, "CreateCeremony", s.Identity.CreateCeremony(ctx, c), nil)
	wantErr(t, "use it as another kind", s.Identity.UseCeremony(ctx, c.IDHash, identity.CeremonyRegister, at, nil), gatehouse.ErrNotFound)
	wantErr(t, "use it when it expires", s.Identity.UseCeremony(ctx, c.IDHash, c.Kind, c.ExpiresAt, nil), gatehouse.ErrNotFound)
	wantErr(t, "use it with another session", s.Identity.UseCeremony(ctx, c.IDHash, c.Kind, at, []byte(`{"challenge":"y"}`)), gatehouse.ErrNotFound)
	wantErr(t, "use it with a longer session", s.Identity.UseCeremony(ctx, c.IDHash, c.Kind, at, append(c.Session, ' ')), gatehouse.ErrNotFound)
	race(t, racers, func(int) error { return s.Identity.UseCeremony(ctx, c.IDHash, c.Kind, at, c.Session) })
	wantErr(t, "use it again", s.Identity.UseCeremony(ctx, c.IDHash, c.Kind, at, nil), gatehouse.ErrNotFound)

	u := newUser(t, s)
	owned := &identity.Ceremony{IDHash: newID(), Kind: identity.CeremonyLogin, UserID: u.ID, Session: []byte(`{}`), ExpiresAt: at.Add(time.Minute)}
	wantErr(t, "CreateCeremony", s.Identity.CreateCeremony(ctx, owned), nil)
	wantErr(t, "use an account's ceremony by its session", s.Identity.UseCeremony(ctx, owned.IDHash, owned.Kind, at, owned.Session), gatehouse.ErrNotFound)
	wantErr(t, "use an account's ceremony", s.Identity.UseCeremony(ctx, owned.IDHash, owned.Kind, at, nil), nil)
}

// testPasskeyCount: of concurrent uses with one sign count one counts; a
// count of 0 counts while the stored one is 0, a lower or equal non-zero
// one never; the passkey reads back as stored.
func testPasskeyCount(t *testing.T, s Stores) {
	ctx := context.Background()
	pk := newPasskey(t, s, newUser(t, s))
	got, err := s.Identity.PasskeyByCredentialID(ctx, pk.CredentialID)
	wantErr(t, "PasskeyByCredentialID", err, nil)
	if got.ID != pk.ID || len(got.Transports) != 2 || len(got.AAGUID) != 16 || got.LastUsedAt != nil {
		t.Fatalf("read %+v; want %+v", got, pk)
	}
	acct, err := s.Identity.PasskeyOwner(ctx, pk.CredentialID)
	wantErr(t, "PasskeyOwner", err, nil)
	if owned, owner := acct.Passkey, acct.User; owned.ID != got.ID || owned.UserID != pk.UserID || len(owned.Transports) != 2 ||
		string(owned.PublicKey) != "cose" || owner.ID != pk.UserID || owner.Email == "" || owner.Name != "Test User" ||
		owner.CreatedAt.IsZero() || acct.Home != nil || acct.HomeRole != "" {
		t.Fatalf("PasskeyOwner read %+v; want %+v of user %s, no default workspace", acct, got, pk.UserID)
	}
	home := newOrg(t, s, acct.User, workspace.OrgTeam)
	wantErr(t, "SetDefaultOrg", s.Identity.SetDefaultOrg(ctx, pk.UserID, home.ID), nil)
	acct, err = s.Identity.PasskeyOwner(ctx, pk.CredentialID)
	wantErr(t, "PasskeyOwner with a default workspace", err, nil)
	if acct.User.DefaultOrgID != home.ID || acct.Home == nil || acct.Home.ID != home.ID || acct.Home.Slug != home.Slug ||
		acct.HomeRole != workspace.RoleOwner || acct.Home.ToolStates == nil {
		t.Fatalf("PasskeyOwner read home %+v, role %q; want workspace %s, owner", acct.Home, acct.HomeRole, home.ID)
	}
	_, err = s.Identity.PasskeyOwner(ctx, []byte("never-registered"))
	wantErr(t, "PasskeyOwner of an unknown credential", err, gatehouse.ErrNotFound)
	at := now()
	wantErr(t, "use with count 0", s.Identity.UsePasskey(ctx, pk.ID, 0, true, false, at), nil)
	wantErr(t, "use with count 0 again", s.Identity.UsePasskey(ctx, pk.ID, 0, true, false, at), nil)
	race(t, racers, func(int) error { return s.Identity.UsePasskey(ctx, pk.ID, 7, true, true, at) })
	for _, count := range []uint32{7, 3, 0} {
		wantErr(t, "use with a count not above 7", s.Identity.UsePasskey(ctx, pk.ID, count, true, true, at), gatehouse.ErrNotFound)
	}
	got, _ = s.Identity.PasskeyByCredentialID(ctx, pk.CredentialID)
	if got.SignCount != 7 || !got.BackedUp || got.LastUsedAt == nil || !got.LastUsedAt.Equal(at) {
		t.Fatalf("after the uses: %+v; want count 7, backed up, last used %v", got, at)
	}
}
