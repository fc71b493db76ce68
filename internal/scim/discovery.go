package scim

import "net/http"

// handleServiceProviderConfig handles "GET /scim/v2/ServiceProviderConfig"
// (RFC 7643 section 5).
func (h *handlers) handleServiceProviderConfig(w http.ResponseWriter, r *http.Request, _ *Token) error {
	write(w, http.StatusOK, map[string]any{
		"schemas":          []string{SchemaSPC},
		"documentationUri": h.svc.base,
		"patch":            map[string]any{"supported": true},
		"bulk":             map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":           map[string]any{"supported": true, "maxResults": MaxCount},
		"changePassword":   map[string]any{"supported": false},
		"sort":             map[string]any{"supported": false},
		"etag":             map[string]any{"supported": false},
		"authenticationSchemes": []map[string]any{{"type": "oauthbearertoken", "name": "OAuth Bearer Token",
			"description": "A SCIM token of the workspace (scim_…), created by an owner or admin", "primary": true}},
		"meta": map[string]any{"resourceType": "ServiceProviderConfig", "location": h.svc.base + "/ServiceProviderConfig"},
	})
	return nil
}

// handleResourceTypes handles "GET /scim/v2/ResourceTypes": User (with
// the enterprise extension) and Group.
func (h *handlers) handleResourceTypes(w http.ResponseWriter, r *http.Request, _ *Token) error {
	user := map[string]any{"schemas": []string{SchemaRT}, "id": "User", "name": "User", "endpoint": "/Users", "schema": SchemaUser,
		"schemaExtensions": []map[string]any{{"schema": SchemaEnterprise, "required": false}},
		"meta":             map[string]any{"resourceType": "ResourceType", "location": h.svc.base + "/ResourceTypes/User"}}
	group := map[string]any{"schemas": []string{SchemaRT}, "id": "Group", "name": "Group", "endpoint": "/Groups", "schema": SchemaGroup,
		"meta": map[string]any{"resourceType": "ResourceType", "location": h.svc.base + "/ResourceTypes/Group"}}
	write(w, http.StatusOK, map[string]any{"schemas": []string{SchemaList}, "totalResults": 2, "startIndex": 1, "itemsPerPage": 2,
		"Resources": []any{user, group}})
	return nil
}

// handleSchemas handles "GET /scim/v2/Schemas": the attributes this
// provider keys and filters on, and the enterprise extension it keeps.
func (h *handlers) handleSchemas(w http.ResponseWriter, r *http.Request, _ *Token) error {
	attr := func(name, typ string, multi, required bool, uniqueness string, subs ...map[string]any) map[string]any {
		a := map[string]any{"name": name, "type": typ, "multiValued": multi, "required": required, "caseExact": false,
			"mutability": "readWrite", "returned": "default", "uniqueness": uniqueness}
		if len(subs) > 0 {
			a["subAttributes"] = subs
		}
		return a
	}
	user := map[string]any{"schemas": []string{SchemaSchema}, "id": SchemaUser, "name": "User", "description": "A directory user",
		"attributes": []any{
			attr("userName", "string", false, true, "server"),
			attr("externalId", "string", false, false, "none"),
			attr("displayName", "string", false, false, "none"),
			attr("active", "boolean", false, false, "none"),
			attr("name", "complex", false, false, "none", attr("givenName", "string", false, false, "none"),
				attr("familyName", "string", false, false, "none"), attr("formatted", "string", false, false, "none")),
			attr("emails", "complex", true, false, "none", attr("value", "string", false, false, "none"),
				attr("type", "string", false, false, "none"), attr("primary", "boolean", false, false, "none")),
		},
		"meta": map[string]any{"resourceType": "Schema", "location": h.svc.base + "/Schemas/" + SchemaUser}}
	ent := map[string]any{"schemas": []string{SchemaSchema}, "id": SchemaEnterprise, "name": "EnterpriseUser", "description": "Enterprise user",
		"attributes": []any{attr("employeeNumber", "string", false, false, "none"), attr("department", "string", false, false, "none"),
			attr("costCenter", "string", false, false, "none"), attr("organization", "string", false, false, "none"),
			attr("division", "string", false, false, "none"), attr("manager", "complex", false, false, "none", attr("value", "string", false, false, "none"))},
		"meta": map[string]any{"resourceType": "Schema", "location": h.svc.base + "/Schemas/" + SchemaEnterprise}}
	group := map[string]any{"schemas": []string{SchemaSchema}, "id": SchemaGroup, "name": "Group", "description": "A team of the workspace",
		"attributes": []any{attr("displayName", "string", false, true, "none"), attr("externalId", "string", false, false, "none"),
			attr("members", "complex", true, false, "none", attr("value", "string", false, false, "none"), attr("display", "string", false, false, "none"))},
		"meta": map[string]any{"resourceType": "Schema", "location": h.svc.base + "/Schemas/" + SchemaGroup}}
	write(w, http.StatusOK, map[string]any{"schemas": []string{SchemaList}, "totalResults": 3, "startIndex": 1, "itemsPerPage": 3,
		"Resources": []any{user, ent, group}})
	return nil
}
