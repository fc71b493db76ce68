// Package storetest is the storage conformance suite: the rules every
// store must keep whatever database it runs on, checked through the
// store's own methods. A store joins by calling Run from a test with a
// function that opens it (see sqlstore's conformance_test.go, which runs
// the suite on SQLite and on PostgreSQL).
//
// The rules are those the domain relies on the store for: a refresh token
// rotates once, and every refresh path refuses the same sessions under one
// session policy, every one-time secret is used once however many callers
// race for it, a uniqueness rule answers gatehouse.ErrConflict without
// breaking the transaction around it, LockOrg serializes the transactions
// that take it, the mail limits' ledger counts what was recorded, a soft-deleted org is invisible to live reads, a tool
// never switched reads as such (gatehouse.ToolOn then turns it on), and a
// session-ending write queues its back-channel logouts in its own
// transaction.
package storetest

import (
	"context"
	"errors"
	"github.com/gatehouse/gatehouse"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/testenv"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// Stores are the stores of one database that the suite checks: those of
// the modules whose rules it relies on the store for.
type Stores struct {
	Identity identity.Store
	OAuth    oauth.Store
	Forms    forms.Store
	Links    links.Store
	// RefreshAll, for a store that batches refreshes into one commit
	// (PostgreSQL's statement, SQLite's transaction), runs refreshes of distinct sessions (presenting
	// hashes, with successors next, under policy p) as one such batch and
	// returns each one's read (nil: nothing rotated) and error; nil: the
	// store has no batch.
	RefreshAll func(ctx context.Context, sids, hashes []string, next []*identity.RefreshToken, p identity.SessionPolicy) ([]*identity.RefreshRead, []error)
	// PendingJobs counts the jobs of a kind queued and not yet worked
	// (nil: the store queues none, and the job rules are skipped).
	PendingJobs func(ctx context.Context, kind string) (int, error)
}

// racers is how many goroutines race for a one-time secret.
const racers = 8

// Run runs the suite, one subtest per rule; open returns the stores for
// one subtest (of a fresh database, or of one shared by subtests: each
// subtest writes only rows of its own).
func Run(t *testing.T, open func(t *testing.T) Stores) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"RotateRefresh", testRotateRefresh},
		{"session policy", testSessionPolicy},
		{"one-time secrets", testOneTimeSecrets},
		{"conflicts", testConflicts},
		{"conflicts inside a transaction", testConflictsInTx},
		{"LockOrg", testLockOrg},
		{"soft-deleted orgs", testSoftDeletedOrgs},
		{"tools on by default", testToolsOnByDefault},
		{"MemberPage", testMemberPage},
		{"MemberKeyset", testMemberKeyset},
		{"passkey ceremony used once", testPasskeyCeremony},
		{"passkey ceremony used once without reading it", testPasskeyCeremonyUse},
		{"passkey sign count", testPasskeyCount},
		{"mail ledger", testMailLedger},
		{"logout jobs", testLogoutJobs},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// now is the suite's clock: the real time at microsecond precision, the
// precision stores keep.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func newID() string { return uuid.NewString() }

// race calls use from n goroutines released at once and checks that
// exactly one call succeeds and every other one fails with ErrNotFound.
func race(t *testing.T, n int, use func(i int) error) {
	t.Helper()
	errs := make([]error, n)
	testenv.AtOnce(n, func(i int) { errs[i] = use(i) })
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, gatehouse.ErrNotFound):
			t.Errorf("call %d = %v; want nil or ErrNotFound", i, err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d concurrent calls succeeded; want exactly 1", wins, n)
	}
}

// wantErr fails t unless err is want (nil included).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("%s = %v; want %v", what, err, want)
	}
}

// newUser stores a user with a fresh address.
func newUser(t *testing.T, s Stores) *gatehouse.User {
	t.Helper()
	at := now()
	// No "a" in the random part, so no search a test makes ("ada") can
	// match this address by chance.
	email := "user-" + strings.ReplaceAll(newID(), "a", "g") + "@example.com"
	u := &gatehouse.User{ID: newID(), Email: email, EmailKey: email, Name: "Test User", EmailVerified: true, CreatedAt: at, UpdatedAt: at}
	wantErr(t, "CreateUser", s.Identity.CreateUser(context.Background(), u), nil)
	return u
}

// newOrg stores an org of kind with owner as its owner member.
func newOrg(t *testing.T, s Stores, owner *gatehouse.User, kind string) *workspace.Org {
	t.Helper()
	ctx := context.Background()
	o := &workspace.Org{ID: newID(), Name: "Org", Slug: "org-" + newID(), Kind: kind, CreatedAt: now()}
	if kind == workspace.OrgPersonal {
		o.OwnerID = owner.ID
	}
	wantErr(t, "CreateOrg", s.Identity.CreateOrg(ctx, o), nil)
	m := &workspace.Membership{OrgID: o.ID, UserID: owner.ID, Role: workspace.RoleOwner, JoinedAt: o.CreatedAt}
	wantErr(t, "AddMember", s.Identity.AddMember(ctx, m), nil)
	return o
}

// newSession stores a live session of u and its first refresh token.
func newSession(t *testing.T, s Stores, u *gatehouse.User) (*identity.Session, *identity.RefreshToken) {
	t.Helper()
	ctx := context.Background()
	at := now()
	ss := &identity.Session{ID: newID(), UserID: u.ID, Via: gatehouse.ViaPassword, CreatedAt: at, ExpiresAt: at.Add(time.Hour), LastUsedAt: at,
		RefreshHash: newID()}
	wantErr(t, "CreateSession", s.Identity.CreateSession(ctx, ss), nil)
	return ss, &identity.RefreshToken{Hash: ss.RefreshHash, SessionID: ss.ID, ExpiresAt: ss.ExpiresAt}
}

// newForm stores a form of org.
func newForm(t *testing.T, s Stores, org *workspace.Org, by *gatehouse.User) *forms.Form {
	t.Helper()
	f := &forms.Form{ID: newID(), OrgID: org.ID, Name: "Contact", CreatedBy: by.ID, Created: now()}
	wantErr(t, "CreateForm", s.Forms.CreateForm(context.Background(), f), nil)
	return f
}

// newLink stores an active link of org.
func newLink(t *testing.T, s Stores, org *workspace.Org, by *gatehouse.User) *links.Link {
	t.Helper()
	at := now()
	l := &links.Link{ID: newID(), OrgID: org.ID, ShortCode: newID()[:13], DestinationURL: "https://example.com/", Title: "Example",
		CreatedBy: by.ID, Active: true, Created: at, Modified: at}
	wantErr(t, "CreateLink", s.Links.CreateLink(context.Background(), l), nil)
	return l
}

// follow clicks l's short code.
func follow(s Stores, l *links.Link) error {
	_, _, err := s.Links.Follow(context.Background(), l.ShortCode, &links.Click{ID: newID(), At: now()})
	return err
}
