package testenv

import (
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

func TestForgeJWTDecodes(t *testing.T) {
	header := map[string]any{"alg": "HS256", "typ": "JWT"}
	claims := map[string]any{"sub": "u1", "sid": "s1", "org": map[string]any{"id": "o1", "role": "admin", "tools": []any{"tasks", "crm"}}}
	jwt := ForgeJWT(t, header, claims, "HS256", []byte(JWTSecret))
	if got := Header(t, jwt); got["alg"] != "HS256" || got["typ"] != "JWT" {
		t.Errorf("Header = %v; want %v", got, header)
	}
	if got := Claims(t, jwt); got["sub"] != "u1" {
		t.Errorf("Claims sub = %v; want u1", got["sub"])
	}
	if got := SID(t, jwt); got != "s1" {
		t.Errorf("SID = %q; want s1", got)
	}
	id, role, tools := TokenOrg(t, jwt)
	if id != "o1" || role != "admin" || !slices.Equal(tools, []string{"tasks", "crm"}) {
		t.Errorf("TokenOrg = %s %s %v; want o1 admin [tasks crm]", id, role, tools)
	}
	if unsigned := ForgeJWT(t, header, claims, "none", nil); unsigned[len(unsigned)-1] != '.' {
		t.Errorf("alg none token %q; want an empty signature", unsigned)
	}
}

func TestToolsExcept(t *testing.T) {
	if got := ToolsExcept(); !slices.Equal(got, workspace.Tools) {
		t.Errorf("ToolsExcept() = %v; want workspace.Tools %v", got, workspace.Tools)
	}
	got := ToolsExcept("sign", "crm")
	if len(got) != len(workspace.Tools)-2 || slices.Contains(got, "sign") || slices.Contains(got, "crm") {
		t.Errorf("ToolsExcept(sign, crm) = %v", got)
	}
}

func TestIsUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"6f1c2a7e-8d3b-4c55-9e0a-2b7d9c4e1f30": true,
		"6F1C2A7E-8D3B-4C55-9E0A-2B7D9C4E1F30": false,
		"not-a-uuid":                           false,
		"":                                     false,
	} {
		if got := IsUUID(s); got != want {
			t.Errorf("IsUUID(%q) = %v; want %v", s, got, want)
		}
	}
}
