package workspace

import "testing"

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
