package storetest

import (
	"context"
	"errors"
	"github.com/gatehouse/gatehouse"
	"testing"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/oauth"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// A conflict is a uniqueness rule: seed stores a row and returns a write
// of a second row the rule forbids.
type conflict struct {
	name string
	seed func(t *testing.T, s Stores) (dup func(st identity.Store) error)
	// inTx: the write keeps a surrounding transaction usable (INSERT … ON
	// CONFLICT DO NOTHING), and is made inside one by the domain, which
	// goes on after the conflict.
	inTx bool
}

var conflicts = []conflict{
	{name: "user email key", inTx: true, seed: func(t *testing.T, s Stores) func(identity.Store) error {
		u := newUser(t, s)
		return func(st identity.Store) error {
			dup := *u
			dup.ID = newID()
			return st.CreateUser(context.Background(), &dup)
		}
	}},
	{name: "live org slug", inTx: true, seed: func(t *testing.T, s Stores) func(identity.Store) error {
		o := newOrg(t, s, newUser(t, s), workspace.OrgTeam)
		return func(st identity.Store) error {
			dup := workspace.Org{ID: newID(), Name: "Other", Slug: o.Slug, Kind: workspace.OrgTeam, CreatedAt: now()}
			return st.CreateOrg(context.Background(), &dup)
		}
	}},
	{name: "second personal org", inTx: true, seed: func(t *testing.T, s Stores) func(identity.Store) error {
		u := newUser(t, s)
		newOrg(t, s, u, workspace.OrgPersonal)
		return func(st identity.Store) error {
			dup := workspace.Org{ID: newID(), Name: "Other", Slug: "org-" + newID(), Kind: workspace.OrgPersonal, OwnerID: u.ID, CreatedAt: now()}
			return st.CreateOrg(context.Background(), &dup)
		}
	}},
	{name: "membership", inTx: true, seed: func(t *testing.T, s Stores) func(identity.Store) error {
		u := newUser(t, s)
		o := newOrg(t, s, u, workspace.OrgTeam)
		return func(st identity.Store) error {
			return st.AddMember(context.Background(), &workspace.Membership{OrgID: o.ID, UserID: u.ID, Role: workspace.RoleMember, JoinedAt: now()})
		}
	}},
	{name: "domain claimed twice by one org", inTx: true, seed: func(t *testing.T, s Stores) func(identity.Store) error {
		d := newDomain(t, s, newOrg(t, s, newUser(t, s), workspace.OrgTeam), "claimed-"+newID()+".example")
		return func(st identity.Store) error {
			dup := *d
			dup.ID = newID()
			return st.CreateDomain(context.Background(), &dup)
		}
	}},
	{name: "domain verified by a second org", seed: func(t *testing.T, s Stores) func(identity.Store) error {
		domain := "verified-" + newID() + ".example"
		first := newDomain(t, s, newOrg(t, s, newUser(t, s), workspace.OrgTeam), domain)
		wantErr(t, "MarkDomainVerified", s.Identity.MarkDomainVerified(context.Background(), first.ID, now()), nil)
		second := newDomain(t, s, newOrg(t, s, newUser(t, s), workspace.OrgTeam), domain)
		return func(st identity.Store) error { return st.MarkDomainVerified(context.Background(), second.ID, now()) }
	}},
	{name: "device user code", seed: func(t *testing.T, s Stores) func(identity.Store) error {
		at := now()
		d := &oauth.DeviceCode{DeviceHash: newID(), UserHash: newID(), ClientID: "client", Interval: oauth.DefaultInterval,
			Status: oauth.DevicePending, CreatedAt: at, ExpiresAt: at.Add(oauth.DeviceCodeTTL)}
		wantErr(t, "CreateDeviceCode", s.OAuth.CreateDeviceCode(context.Background(), d), nil)
		return func(identity.Store) error {
			dup := *d
			dup.DeviceHash = newID()
			return s.OAuth.CreateDeviceCode(context.Background(), &dup)
		}
	}},
	{name: "passkey credential id, any account", seed: func(t *testing.T, s Stores) func(identity.Store) error {
		pk := newPasskey(t, s, newUser(t, s))
		other := newUser(t, s)
		return func(st identity.Store) error {
			dup := *pk
			dup.ID, dup.UserID = newID(), other.ID
			return st.CreatePasskey(context.Background(), &dup)
		}
	}},
	{name: "link short code", seed: func(t *testing.T, s Stores) func(identity.Store) error {
		u := newUser(t, s)
		l := newLink(t, s, newOrg(t, s, u, workspace.OrgTeam), u)
		return func(identity.Store) error {
			dup := *l
			dup.ID = newID()
			return s.Links.CreateLink(context.Background(), &dup)
		}
	}},
}

// newDomain stores an unverified claim of org on domain.
func newDomain(t *testing.T, s Stores, org *workspace.Org, domain string) *workspace.DomainClaim {
	t.Helper()
	d := &workspace.DomainClaim{ID: newID(), OrgID: org.ID, Domain: domain, Mode: "suggest", Token: newID(), CreatedAt: now()}
	wantErr(t, "CreateDomain", s.Identity.CreateDomain(context.Background(), d), nil)
	return d
}

func testConflicts(t *testing.T, s Stores) {
	for _, c := range conflicts {
		t.Run(c.name, func(t *testing.T) {
			dup := c.seed(t, s)
			wantErr(t, "second write", dup(s.Identity), gatehouse.ErrConflict)
		})
	}
	t.Run("slug of a deleted org", func(t *testing.T) {
		ctx := context.Background()
		o := newOrg(t, s, newUser(t, s), workspace.OrgTeam)
		wantErr(t, "SoftDeleteOrg", s.Identity.SoftDeleteOrg(ctx, o.ID, now()), nil)
		reuse := workspace.Org{ID: newID(), Name: "Reuse", Slug: o.Slug, Kind: workspace.OrgTeam, CreatedAt: now()}
		wantErr(t, "CreateOrg with a deleted org's slug", s.Identity.CreateOrg(ctx, &reuse), nil)
	})
}

// testConflictsInTx: on PostgreSQL an error inside a transaction aborts
// it, so a conflict the domain recovers from must not be an error there.
func testConflictsInTx(t *testing.T, s Stores) {
	ctx := context.Background()
	for _, c := range conflicts {
		if !c.inTx {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			dup := c.seed(t, s)
			after := &workspace.Org{ID: newID(), Name: "After", Slug: "org-" + newID(), Kind: workspace.OrgTeam, CreatedAt: now()}
			err := s.Identity.Tx(ctx, func(tx identity.Store) error {
				if err := dup(tx); !errors.Is(err, gatehouse.ErrConflict) {
					t.Errorf("second write in a transaction = %v; want ErrConflict", err)
				}
				return tx.CreateOrg(ctx, after)
			})
			wantErr(t, "transaction going on after the conflict", err, nil)
			if got, err := s.Identity.OrgByID(ctx, after.ID); err != nil {
				t.Errorf("org written after the conflict = %+v, %v; want it committed", got, err)
			}
		})
	}
}
