package storetest

import (
	"context"
	"errors"
	"github.com/gatehouse/gatehouse"
	"maps"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/identity"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// testLockOrg holds an org's lock in one transaction and checks that a
// second transaction's LockOrg returns only once the first has committed,
// and then sees its write.
func testLockOrg(t *testing.T, s Stores) {
	ctx := context.Background()
	o := newOrg(t, s, newUser(t, s), workspace.OrgTeam)
	locked, second := make(chan struct{}), make(chan string, 1)
	first := make(chan error, 1)
	go func() {
		first <- s.Identity.Tx(ctx, func(tx identity.Store) error {
			if err := tx.LockOrg(ctx, o.ID); err != nil {
				return err
			}
			close(locked)
			select {
			case name := <-second:
				return errors.New("the second transaction took the lock while the first held it; it read the name " + name)
			case <-time.After(300 * time.Millisecond):
			}
			renamed := *o
			renamed.Name = "Renamed by the first"
			return tx.UpdateOrg(ctx, &renamed)
		})
	}()
	select {
	case <-locked:
	case err := <-first:
		t.Fatalf("first transaction = %v before it locked", err)
	}
	var name string
	err := s.Identity.Tx(ctx, func(tx identity.Store) error {
		if err := tx.LockOrg(ctx, o.ID); err != nil {
			return err
		}
		got, err := tx.OrgByID(ctx, o.ID)
		if err != nil {
			return err
		}
		name = got.Name
		second <- name
		return nil
	})
	wantErr(t, "second transaction", err, nil)
	wantErr(t, "first transaction", <-first, nil)
	if name != "Renamed by the first" {
		t.Errorf("second transaction read the name %q; want the first's committed %q", name, "Renamed by the first")
	}
}

// testSoftDeletedOrgs deletes a workspace with a verified domain, a form
// and a link, and a personal org, and checks every live read.
func testSoftDeletedOrgs(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	personal := newOrg(t, s, u, workspace.OrgPersonal)
	org := newOrg(t, s, u, workspace.OrgTeam)
	domain := "deleted-" + newID() + ".example"
	d := newDomain(t, s, org, domain)
	wantErr(t, "MarkDomainVerified", s.Identity.MarkDomainVerified(ctx, d.ID, now()), nil)
	f, l := newForm(t, s, org, u), newLink(t, s, org, u)
	for _, o := range []*workspace.Org{org, personal} {
		wantErr(t, "SoftDeleteOrg", s.Identity.SoftDeleteOrg(ctx, o.ID, now()), nil)
		wantErr(t, "SoftDeleteOrg again", s.Identity.SoftDeleteOrg(ctx, o.ID, now()), gatehouse.ErrNotFound)
	}

	t.Run("org reads", func(t *testing.T) {
		// OrgByID and OrgRole see deleted orgs, marked, so the domain can tell them apart.
		if got, err := s.Identity.OrgByID(ctx, org.ID); err != nil || got.DeletedAt == nil {
			t.Errorf("OrgByID = %+v, %v; want the org with DeletedAt set", got, err)
		}
		if got, role, err := s.Identity.OrgRole(ctx, org.ID, u.ID); err != nil || got.DeletedAt == nil || role != workspace.RoleOwner {
			t.Errorf("OrgRole = %+v, %q, %v; want the org with DeletedAt set, owner", got, role, err)
		}
		if got, err := s.Identity.UserOrgs(ctx, u.ID); err != nil || len(got) != 0 {
			t.Errorf("UserOrgs = %+v, %v; want none", got, err)
		}
		if got, err := s.Identity.PersonalOrg(ctx, u.ID); !errors.Is(err, gatehouse.ErrNotFound) {
			t.Errorf("PersonalOrg = %+v, %v; want ErrNotFound", got, err)
		}
		if taken, err := s.Identity.SlugTaken(ctx, org.Slug); err != nil || taken {
			t.Errorf("SlugTaken = %v, %v; want false", taken, err)
		}
		renamed := *org
		renamed.Name = "Renamed"
		wantErr(t, "UpdateOrg", s.Identity.UpdateOrg(ctx, &renamed), gatehouse.ErrNotFound)
		newOrg(t, s, u, workspace.OrgPersonal) // the personal slot is free again
	})
	t.Run("domains", func(t *testing.T) {
		if got, err := s.Identity.DomainOffers(ctx, domain); err != nil || len(got) != 0 {
			t.Errorf("DomainOffers = %+v, %v; want none", got, err)
		}
		if got, err := s.Identity.DomainVerifiedBy(ctx, domain); !errors.Is(err, gatehouse.ErrNotFound) {
			t.Errorf("DomainVerifiedBy = %q, %v; want ErrNotFound", got, err)
		}
	})
	t.Run("tools", func(t *testing.T) { testDeletedOrgTools(t, s, org, f.ID, l) })
}

// testDeletedOrgTools checks the tools' live reads of a deleted org.
func testDeletedOrgTools(t *testing.T, s Stores, org *workspace.Org, formID string, l *links.Link) {
	ctx := context.Background()
	if live, err := s.Forms.OrgLive(ctx, org.ID); err != nil || live {
		t.Errorf("OrgLive = %v, %v; want false", live, err)
	}
	if got, err := s.Forms.LiveForm(ctx, org.ID, formID); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Errorf("LiveForm = %+v, %v; want ErrNotFound", got, err)
	}
	if got, err := s.Forms.ListForms(ctx, org.ID); err != nil || len(got) != 0 {
		t.Errorf("ListForms = %+v, %v; want none", got, err)
	}
	if got, err := s.Links.Link(ctx, org.ID, l.ID); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Errorf("Link = %+v, %v; want ErrNotFound", got, err)
	}
	if got, err := s.Links.ListLinks(ctx, org.ID); err != nil || len(got) != 0 {
		t.Errorf("ListLinks = %+v, %v; want none", got, err)
	}
	wantErr(t, "follow a deleted org's link", follow(s, l), gatehouse.ErrNotFound)
}

// testToolsOnByDefault: an org has a switch only for a tool switched
// explicitly; every read of a switch reports one never set as such (nil,
// or absent from ToolStates), which gatehouse.ToolOn turns on; and a switch
// touches its own org only.
func testToolsOnByDefault(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(t, s)
	org, other := newOrg(t, s, u, workspace.OrgTeam), newOrg(t, s, u, workspace.OrgTeam)
	fOrg, fOther := newForm(t, s, org, u), newForm(t, s, other, u)
	lOrg, lOther := newLink(t, s, org, u), newLink(t, s, other, u)
	off, on := false, true

	wantTools(t, s, org, map[string]bool{})
	wantFormSwitch(t, s, fOrg.OrgID, fOrg.ID, nil)
	wantFollowSwitch(t, s, lOrg, nil)

	wantErr(t, "SetTool forms off", s.Identity.SetTool(ctx, org.ID, "forms", false), nil)
	wantErr(t, "SetTool links off", s.Identity.SetTool(ctx, org.ID, "links", false), nil)
	wantTools(t, s, org, map[string]bool{"forms": false, "links": false})
	wantFormSwitch(t, s, fOrg.OrgID, fOrg.ID, &off)
	wantFollowSwitch(t, s, lOrg, &off)

	wantTools(t, s, other, map[string]bool{})
	wantFormSwitch(t, s, fOther.OrgID, fOther.ID, nil)
	wantFollowSwitch(t, s, lOther, nil)

	wantErr(t, "SetTool forms on", s.Identity.SetTool(ctx, org.ID, "forms", true), nil)
	wantTools(t, s, org, map[string]bool{"forms": true, "links": false})
	wantFormSwitch(t, s, fOrg.OrgID, fOrg.ID, &on)
	wantFollowSwitch(t, s, lOrg, &off)
}

// wantTools checks the switch rows of org as ToolStates and OrgRole read them.
func wantTools(t *testing.T, s Stores, org *workspace.Org, want map[string]bool) {
	t.Helper()
	ctx := context.Background()
	if got, err := s.Identity.ToolStates(ctx, org.ID); err != nil || !maps.Equal(got, want) {
		t.Errorf("ToolStates = %v, %v; want %v", got, err, want)
	}
	if got, _, err := s.Identity.OrgRole(ctx, org.ID, ""); err != nil || got.ToolStates == nil || !maps.Equal(got.ToolStates, want) {
		t.Errorf("OrgRole tool states = %+v, %v; want %v", got, err, want)
	}
}

// wantFormSwitch checks the Forms switch read with a form, alone and listed.
func wantFormSwitch(t *testing.T, s Stores, orgID, formID string, want *bool) {
	t.Helper()
	ctx := context.Background()
	if got, err := s.Forms.LiveForm(ctx, orgID, formID); err != nil {
		t.Errorf("LiveForm = %v", err)
	} else {
		wantSwitch(t, "LiveForm", got.ToolSwitch, want)
	}
	got, err := s.Forms.ListForms(ctx, orgID)
	if err != nil || len(got) != 1 {
		t.Errorf("ListForms = %d forms, %v; want 1", len(got), err)
		return
	}
	wantSwitch(t, "ListForms", got[0].ToolSwitch, want)
}

// wantFollowSwitch checks the Links switch that Follow reads.
func wantFollowSwitch(t *testing.T, s Stores, l *links.Link, want *bool) {
	t.Helper()
	_, got, err := s.Links.Follow(context.Background(), l.ShortCode, &links.Click{ID: newID(), At: now()})
	if err != nil {
		t.Errorf("Follow = %v", err)
		return
	}
	wantSwitch(t, "Follow", got, want)
}

// wantSwitch compares a switch as read with want, and what the domain's
// rule makes of it.
func wantSwitch(t *testing.T, what string, got, want *bool) {
	t.Helper()
	if switchText(got) != switchText(want) || gatehouse.ToolOn(got) != gatehouse.ToolOn(want) {
		t.Errorf("%s switch = %s (on: %v); want %s (on: %v)", what, switchText(got), gatehouse.ToolOn(got), switchText(want), gatehouse.ToolOn(want))
	}
}

func switchText(b *bool) string {
	switch {
	case b == nil:
		return "never set"
	case *b:
		return "on"
	}
	return "off"
}
