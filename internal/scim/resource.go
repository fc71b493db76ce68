package scim

import (
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
)

// The attributes a user resource keeps in columns, and those the server
// owns or never takes (a password: provisioning never sets one).
var (
	columnAttrs = []string{"userName", "externalId", "displayName", "active"}
	serverAttrs = []string{"id", "meta", "schemas", "password", "groups"}
)

// render is u as a SCIM User resource (RFC 7643 section 4.1).
func (s *Service) render(u *DirUser) map[string]any {
	res := make(map[string]any, len(u.Resource)+8)
	for k, v := range u.Resource {
		res[k] = v
	}
	schemas := []any{SchemaUser}
	if getKey(res, SchemaEnterprise) != nil {
		schemas = append(schemas, SchemaEnterprise)
	}
	res["schemas"] = schemas
	res["id"] = u.ID
	res["userName"] = u.UserName
	res["active"] = u.Active
	if u.ExternalID != "" {
		res["externalId"] = u.ExternalID
	}
	if u.DisplayName != "" {
		res["displayName"] = u.DisplayName
	}
	res["meta"] = map[string]any{"resourceType": "User", "created": stamp(u.CreatedAt), "lastModified": stamp(u.UpdatedAt),
		"location": s.base + "/Users/" + u.ID}
	return res
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// absorb reads the attributes of resource res into u: the columns,
// checked, and the rest kept as sent; the server's own attributes are
// ignored. Booleans may come as strings ("False", as Entra sends them).
func absorb(u *DirUser, res map[string]any) error {
	name, _ := getKey(res, "userName").(string)
	key, display, err := gatehouse.ParseEmail(name)
	if err != nil {
		return invalid(CodeInvalidValue, "userName must be an email address")
	}
	ext, ok := getKey(res, "externalId").(string)
	if !ok && getKey(res, "externalId") != nil {
		return invalid(CodeInvalidValue, "externalId must be a string")
	}
	dn, ok := getKey(res, "displayName").(string)
	if !ok && getKey(res, "displayName") != nil {
		return invalid(CodeInvalidValue, "displayName must be a string")
	}
	active := true
	if v := getKey(res, "active"); v != nil {
		b, ok := boolOf(v)
		if !ok {
			return invalid(CodeInvalidValue, "active must be a boolean")
		}
		active = b
	}
	if len(ext) > 1000 || len(dn) > 1000 {
		return invalid(CodeInvalidValue, "externalId and displayName must be at most 1000 characters")
	}
	rest := map[string]any{}
	for k, v := range res {
		if !oneOf(k, columnAttrs) && !oneOf(k, serverAttrs) && v != nil {
			rest[k] = v
		}
	}
	u.UserName, u.UserNameKey, u.ExternalID, u.DisplayName, u.Active, u.Resource = display, key, ext, strings.TrimSpace(dn), active, rest
	return nil
}

func oneOf(k string, names []string) bool {
	for _, n := range names {
		if strings.EqualFold(k, n) {
			return true
		}
	}
	return false
}

// personName is the name an account provisioned for u is given.
func personName(u *DirUser) string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	if n, ok := getKey(u.Resource, "name").(map[string]any); ok {
		if f, _ := getKey(n, "formatted").(string); f != "" {
			return f
		}
		g, _ := getKey(n, "givenName").(string)
		f, _ := getKey(n, "familyName").(string)
		return strings.TrimSpace(g + " " + f)
	}
	return ""
}

// project keeps the attributes a list or read asked for (attributes) or
// drops those it asked to leave out (excludedAttributes); id, schemas and
// meta always stay (RFC 7644 section 3.9). Names are top-level, optionally
// URN-qualified or with a sub-attribute, which keeps the whole attribute.
func project(res map[string]any, attributes, excluded []string) map[string]any {
	top := func(a string) string {
		_, rest, err := splitURN(a)
		if err != nil || rest == "" {
			return a
		}
		if strings.HasPrefix(strings.ToLower(a), strings.ToLower(SchemaEnterprise)) {
			return SchemaEnterprise
		}
		attr, _, _ := strings.Cut(rest, ".")
		return attr
	}
	always := []string{"id", "schemas", "meta"}
	if len(attributes) > 0 {
		keep := append([]string(nil), always...)
		for _, a := range attributes {
			keep = append(keep, top(a))
		}
		out := map[string]any{}
		for k, v := range res {
			if oneOf(k, keep) {
				out[k] = v
			}
		}
		return out
	}
	for _, a := range excluded {
		if t := top(a); !oneOf(t, always) {
			for k := range res {
				if strings.EqualFold(k, t) {
					delete(res, k)
				}
			}
		}
	}
	return res
}

// splitList splits a comma-separated query parameter.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
