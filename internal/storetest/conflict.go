package storetest

import (
	"context"
	"errors"
	"github.com/gatehouse/gatehouse"
	"testing"

	"github.com/gatehouse/gatehouse/internal/accounts"
	"github.com/gatehouse/gatehouse/internal/oauth"
)

// A conflict is a uniqueness rule: seed stores a row and returns a write
// of a second row the rule forbids.
type conflict struct {
	name string
	seed func(t *testing.T, s Stores) (dup func(st accounts.Store) error)
	// inTx: the write keeps a surrounding transaction usable (INSERT … ON
	// CONFLICT DO NOTHING), and is made inside one by the domain, which
	// goes on after the conflict.
	inTx bool
}

var conflicts = []conflict{
	{name: "user email key", inTx: true, seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		u := newUser(t, s)
		return func(st accounts.Store) error {
			dup := *u
			dup.ID = newID()
			return st.CreateUser(context.Background(), &dup)
		}
	}},
	{name: "live org slug", inTx: true, seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		o := newOrg(t, s, newUser(t, s), accounts.OrgTeam)
		return func(st accounts.Store) error {
			dup := accounts.Org{ID: newID(), Name: "Other", Slug: o.Slug, Kind: accounts.OrgTeam, CreatedAt: now()}
			return st.CreateOrg(context.Background(), &dup)
		}
	}},
	{name: "second personal org", inTx: true, seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		u := newUser(t, s)
		newOrg(t, s, u, accounts.OrgPersonal)
		return func(st accounts.Store) error {
			dup := accounts.Org{ID: newID(), Name: "Other", Slug: "org-" + newID(), Kind: accounts.OrgPersonal, OwnerID: u.ID, CreatedAt: now()}
			return st.CreateOrg(context.Background(), &dup)
		}
	}},
	{name: "membership", inTx: true, seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		u := newUser(t, s)
		o := newOrg(t, s, u, accounts.OrgTeam)
		return func(st accounts.Store) error {
			return st.AddMember(context.Background(), &accounts.Membership{OrgID: o.ID, UserID: u.ID, Role: accounts.RoleMember, JoinedAt: now()})
		}
	}},
	{name: "domain claimed twice by one org", inTx: true, seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		d := newDomain(t, s, newOrg(t, s, newUser(t, s), accounts.OrgTeam), "claimed-"+newID()+".example")
		return func(st accounts.Store) error {
			dup := *d
			dup.ID = newID()
			return st.CreateDomain(context.Background(), &dup)
		}
	}},
	{name: "domain verified by a second org", seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		domain := "verified-" + newID() + ".example"
		first := newDomain(t, s, newOrg(t, s, newUser(t, s), accounts.OrgTeam), domain)
		wantErr(t, "MarkDomainVerified", s.Accounts.MarkDomainVerified(context.Background(), first.ID, now()), nil)
		second := newDomain(t, s, newOrg(t, s, newUser(t, s), accounts.OrgTeam), domain)
		return func(st accounts.Store) error { return st.MarkDomainVerified(context.Background(), second.ID, now()) }
	}},
	{name: "device user code", seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		at := now()
		d := &oauth.DeviceCode{DeviceHash: newID(), UserHash: newID(), ClientID: "client", Interval: oauth.DefaultInterval,
			Status: oauth.DevicePending, CreatedAt: at, ExpiresAt: at.Add(oauth.DeviceCodeTTL)}
		wantErr(t, "CreateDeviceCode", s.OAuth.CreateDeviceCode(context.Background(), d), nil)
		return func(accounts.Store) error {
			dup := *d
			dup.DeviceHash = newID()
			return s.OAuth.CreateDeviceCode(context.Background(), &dup)
		}
	}},
	{name: "link short code", seed: func(t *testing.T, s Stores) func(accounts.Store) error {
		u := newUser(t, s)
		l := newLink(t, s, newOrg(t, s, u, accounts.OrgTeam), u)
		return func(accounts.Store) error {
			dup := *l
			dup.ID = newID()
			return s.Links.CreateLink(context.Background(), &dup)
		}
	}},
}

// newDomain stores an unverified claim of org on domain.
func newDomain(t *testing.T, s Stores, org *accounts.Org, domain string) *accounts.DomainClaim {
	t.Helper()
	d := &accounts.DomainClaim{ID: newID(), OrgID: org.ID, Domain: domain, Mode: "suggest", Token: newID(), CreatedAt: now()}
	wantErr(t, "CreateDomain", s.Accounts.CreateDomain(context.Background(), d), nil)
	return d
}

func testConflicts(t *testing.T, s Stores) {
	for _, c := range conflicts {
		t.Run(c.name, func(t *testing.T) {
			dup := c.seed(t, s)
			wantErr(t, "second write", dup(s.Accounts), gatehouse.ErrConflict)
		})
	}
	t.Run("slug of a deleted org", func(t *testing.T) {
		ctx := context.Background()
		o := newOrg(t, s, newUser(t, s), accounts.OrgTeam)
		wantErr(t, "SoftDeleteOrg", s.Accounts.SoftDeleteOrg(ctx, o.ID, now()), nil)
		reuse := accounts.Org{ID: newID(), Name: "Reuse", Slug: o.Slug, Kind: accounts.OrgTeam, CreatedAt: now()}
		wantErr(t, "CreateOrg with a deleted org's slug", s.Accounts.CreateOrg(ctx, &reuse), nil)
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
			after := &accounts.Org{ID: newID(), Name: "After", Slug: "org-" + newID(), Kind: accounts.OrgTeam, CreatedAt: now()}
			err := s.Accounts.Tx(ctx, func(tx accounts.Store) error {
				if err := dup(tx); !errors.Is(err, gatehouse.ErrConflict) {
					t.Errorf("second write in a transaction = %v; want ErrConflict", err)
				}
				return tx.CreateOrg(ctx, after)
			})
			wantErr(t, "transaction going on after the conflict", err, nil)
			if got, err := s.Accounts.OrgByID(ctx, after.ID); err != nil {
				t.Errorf("org written after the conflict = %+v, %v; want it committed", got, err)
			}
		})
	}
}
