package workspace

import (
	"slices"
	"testing"
)

// TestRoleHas pins the role → permission table of CONTRACT §4.
func TestRoleHas(t *testing.T) {
	perms := []Permission{PermSettings, PermMembers, PermTeams, PermTools, PermDomains, PermDelete, PermOwners}
	want := map[string]map[Permission]bool{
		RoleOwner:   {PermSettings: true, PermMembers: true, PermTeams: true, PermTools: true, PermDomains: true, PermDelete: true, PermOwners: true},
		RoleAdmin:   {PermSettings: true, PermMembers: true, PermTeams: true, PermTools: true, PermDomains: true},
		RoleBilling: {},
		RoleMember:  {},
		"":          {},
		"superuser": {},
	}
	for role, has := range want {
		for _, p := range perms {
			if got := RoleHas(role, p); got != has[p] {
				t.Errorf("RoleHas(%q, %s) = %v; want %v", role, p, got, has[p])
			}
		}
	}
}

// TestCapabilitiesManageTeam: a team is changed by a holder of
// org.teams.manage or by its lead, in a team org only.
func TestCapabilitiesManageTeam(t *testing.T) {
	tests := []struct {
		role, teamRole string
		team, want     bool
	}{
		{RoleOwner, "", true, true},
		{RoleAdmin, "", true, true},
		{RoleMember, TeamLead, true, true},
		{RoleBilling, TeamLead, true, true},
		{RoleMember, TeamMember, true, false},
		{RoleMember, "", true, false},
		{RoleBilling, "", true, false},
		{RoleOwner, "", false, false},
		{RoleMember, TeamLead, false, false},
	}
	for _, tt := range tests {
		c := Capabilities{Role: tt.role, Team: tt.team}
		if got := c.ManageTeam(tt.teamRole); got != tt.want {
			t.Errorf("%+v.ManageTeam(%q) = %v; want %v", c, tt.teamRole, got, tt.want)
		}
	}
}

// TestCapabilitiesChangeRole: org.members.manage changes roles; only an
// owner moves a member to or from owner.
func TestCapabilitiesChangeRole(t *testing.T) {
	tests := []struct {
		role, from, to string
		want           bool
	}{
		{RoleOwner, RoleMember, RoleOwner, true},
		{RoleOwner, RoleOwner, RoleAdmin, true},
		{RoleAdmin, RoleMember, RoleBilling, true},
		{RoleAdmin, RoleMember, RoleAdmin, true},
		{RoleAdmin, RoleMember, RoleOwner, false},
		{RoleAdmin, RoleOwner, RoleMember, false},
		{RoleBilling, RoleMember, RoleAdmin, false},
		{RoleMember, RoleMember, RoleBilling, false},
	}
	for _, tt := range tests {
		c := Capabilities{Role: tt.role, Team: true}
		if got := c.ChangeRole(tt.from, tt.to); got != tt.want {
			t.Errorf("%s ChangeRole(%s → %s) = %v; want %v", tt.role, tt.from, tt.to, got, tt.want)
		}
	}
}

// TestCapabilitiesRemove: org.members.manage removes a member; only an
// owner removes an owner.
func TestCapabilitiesRemove(t *testing.T) {
	tests := []struct {
		role, target string
		want         bool
	}{
		{RoleOwner, RoleOwner, true},
		{RoleOwner, RoleMember, true},
		{RoleAdmin, RoleAdmin, true},
		{RoleAdmin, RoleMember, true},
		{RoleAdmin, RoleOwner, false},
		{RoleBilling, RoleMember, false},
		{RoleMember, RoleMember, false},
	}
	for _, tt := range tests {
		c := Capabilities{Role: tt.role, Team: true}
		if got := c.Remove(tt.target); got != tt.want {
			t.Errorf("%s Remove(%s) = %v; want %v", tt.role, tt.target, got, tt.want)
		}
	}
}

// TestCapabilitiesAssignableRoles: the roles a member may give, owner only
// by an owner, none without org.members.manage.
func TestCapabilitiesAssignableRoles(t *testing.T) {
	tests := map[string][]string{
		RoleOwner:   {RoleOwner, RoleAdmin, RoleBilling, RoleMember},
		RoleAdmin:   {RoleAdmin, RoleBilling, RoleMember},
		RoleBilling: nil,
		RoleMember:  nil,
	}
	for role, want := range tests {
		got := Capabilities{Role: role, Team: true}.AssignableRoles()
		if !slices.Equal(got, want) {
			t.Errorf("%s AssignableRoles() = %v; want %v", role, got, want)
		}
	}
}

// TestCapabilitiesCanInTeam: an operation for team orgs only needs a team
// org and the permission (authorize with teamOnly).
func TestCapabilitiesCanInTeam(t *testing.T) {
	tests := []struct {
		role string
		team bool
		perm Permission
		want bool
	}{
		{RoleOwner, true, PermSettings, true},
		{RoleOwner, false, PermSettings, false},
		{RoleAdmin, true, PermTools, true},
		{RoleAdmin, true, PermDelete, false},
		{RoleMember, true, PermMembers, false},
	}
	for _, tt := range tests {
		c := Capabilities{Role: tt.role, Team: tt.team}
		if got := c.CanInTeam(tt.perm); got != tt.want {
			t.Errorf("%+v.CanInTeam(%s) = %v; want %v", c, tt.perm, got, tt.want)
		}
	}
}
