package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// testMemberPage pages and searches a directory: pages in join order, a
// page past the end empty, the counts, a search that ignores case, % and _
// matched literally, and MemberByEmail.
func testMemberPage(t *testing.T, s Stores) {
	ctx := context.Background()
	owner := newUser(t, s)
	o := newOrg(t, s, owner, workspace.OrgTeam)
	var users []*gatehouse.User
	for i, name := range []string{"Ada Lovelace", "ADA_X", "Max Aaxe", "Grace 100%", "Room 1000"} {
		at := now()
		// No "a" in the random part: a hex id holding "ada" would match
		// the search for "ada" below (one run in about 25 did).
		email := "member-" + strings.ReplaceAll(newID(), "a", "g") + "@example.com"
		u := &gatehouse.User{ID: newID(), Email: email, EmailKey: email, Name: name, CreatedAt: at, UpdatedAt: at}
		wantErr(t, "CreateUser", s.Identity.CreateUser(ctx, u), nil)
		m := &workspace.Membership{OrgID: o.ID, UserID: u.ID, Role: workspace.RoleMember, JoinedAt: o.CreatedAt.Add(time.Duration(i+1) * time.Second)}
		wantErr(t, "AddMember", s.Identity.AddMember(ctx, m), nil)
		users = append(users, u)
	}
	page := func(q string, limit, offset int) ([]string, int) {
		t.Helper()
		rows, err := s.Identity.MemberPage(ctx, o.ID, workspace.MemberFilter{Query: q, Limit: limit, Offset: offset})
		if err != nil {
			t.Fatalf("MemberPage(%q, %d, %d): %v", q, limit, offset, err)
		}
		n, err := s.Identity.CountMembers(ctx, o.ID, q)
		if err != nil {
			t.Fatalf("MemberPage(%q, %d, %d): %v", q, limit, offset, err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r.Name)
		}
		return names, n
	}
	for _, c := range []struct {
		q             string
		limit, offset int
		want          []string
		total         int
	}{
		{"", 2, 0, []string{"Test User", "Ada Lovelace"}, 6},
		{"", 2, 4, []string{"Grace 100%", "Room 1000"}, 6},
		{"", 2, 10, nil, 6},
		{"ada", 10, 0, []string{"Ada Lovelace", "ADA_X"}, 2},
		{"a_x", 10, 0, []string{"ADA_X"}, 1},
		{"100%", 10, 0, []string{"Grace 100%"}, 1},
		{" ", 1, 1, []string{"Ada Lovelace"}, 5}, // names with a space; no address has one
		{" ", 1, 9, nil, 5},
		{users[2].Email[:12], 10, 0, []string{"Max Aaxe"}, 1},
	} {
		names, n := page(c.q, c.limit, c.offset)
		if n != c.total || len(names) != len(c.want) || (len(names) > 0 && names[0] != c.want[0]) || (len(names) > 1 && names[1] != c.want[1]) {
			t.Errorf("MemberPage(%q, limit %d, offset %d) = %q of %d; want %q of %d", c.q, c.limit, c.offset, names, n, c.want, c.total)
		}
	}
	if m, err := s.Identity.MemberByEmail(ctx, o.ID, users[3].Email); err != nil || m.UserID != users[3].ID {
		t.Fatalf("MemberByEmail = %v, %v; want %s", m, err, users[3].ID)
	}
	if _, err := s.Identity.MemberByEmail(ctx, o.ID, "nobody@example.com"); !errors.Is(err, gatehouse.ErrNotFound) {
		t.Fatalf("MemberByEmail of a stranger: %v; want ErrNotFound", err)
	}
}

// testMemberKeyset walks a directory page by page after the last row shown
// (keyset paging): members who joined at the same instant are ordered by
// id and none is skipped or repeated, the page after the last row is
// empty, and a search pages the same way over its matches only.
func testMemberKeyset(t *testing.T, s Stores) {
	ctx := context.Background()
	owner := newUser(t, s)
	o := newOrg(t, s, owner, workspace.OrgTeam)
	for i := range 7 {
		at := now()
		email := "keyset-" + newID() + "@example.com"
		u := &gatehouse.User{ID: newID(), Email: email, EmailKey: email, Name: []string{"Twin", "Other"}[i%2], CreatedAt: at, UpdatedAt: at}
		wantErr(t, "CreateUser", s.Identity.CreateUser(ctx, u), nil)
		joined := o.CreatedAt.Add(time.Duration(1+i/3) * time.Second) // three at each instant
		wantErr(t, "AddMember", s.Identity.AddMember(ctx, &workspace.Membership{OrgID: o.ID, UserID: u.ID, Role: workspace.RoleMember, JoinedAt: joined}), nil)
	}
	all, err := s.Identity.OrgMembers(ctx, o.ID)
	wantErr(t, "OrgMembers", err, nil)
	walk := func(q string) []string {
		t.Helper()
		var ids []string
		var after *workspace.MemberCursor
		for range 10 {
			rows, err := s.Identity.MemberPage(ctx, o.ID, workspace.MemberFilter{Query: q, Limit: 2, After: after})
			wantErr(t, "MemberPage", err, nil)
			if len(rows) == 0 {
				return ids
			}
			for _, r := range rows {
				ids = append(ids, r.UserID)
			}
			last := rows[len(rows)-1]
			after = &workspace.MemberCursor{JoinedAt: last.JoinedAt, UserID: last.UserID}
		}
		t.Fatalf("walking %q: no empty page after 10", q)
		return nil
	}
	var want, twins []string
	for _, m := range all {
		want = append(want, m.UserID)
		if m.Name == "Twin" {
			twins = append(twins, m.UserID)
		}
	}
	if got := walk(""); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("walked directory %q; want %q", got, want)
	}
	if got := walk("twi"); len(twins) != 4 || strings.Join(got, ",") != strings.Join(twins, ",") {
		t.Errorf("walked search %q; want the 4 twins %q", got, twins)
	}
}
