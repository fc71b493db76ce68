package scim

import (
	"strings"
)

// patchOp is one operation of a PATCH request (RFC 7644 section 3.5.2).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// patchPath is a PATCH path: an attribute (in an extension's schema or
// the core one), an optional value filter on a multi-valued attribute and
// an optional sub-attribute: emails[type eq "work"].value.
type patchPath struct {
	attrPath
	filter filter
}

// parsePatchPath parses a PATCH path.
func parsePatchPath(s string) (patchPath, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '[')
	if open < 0 {
		p, err := parseAttrPath(s)
		return patchPath{attrPath: p}, err
	}
	end := strings.LastIndexByte(s, ']')
	if end < open {
		return patchPath{}, invalid(CodeInvalidPath, "invalid path %q", s)
	}
	p, err := parseAttrPath(s[:open])
	if err != nil || p.sub != "" {
		return patchPath{}, invalid(CodeInvalidPath, "invalid path %q", s)
	}
	f, err := parseFilter(s[open+1 : end])
	if err != nil {
		return patchPath{}, invalid(CodeInvalidPath, "invalid filter in path %q", s)
	}
	rest := s[end+1:]
	if rest != "" {
		if rest[0] != '.' || !validName(rest[1:]) {
			return patchPath{}, invalid(CodeInvalidPath, "invalid path %q", s)
		}
		p.sub = rest[1:]
	}
	return patchPath{attrPath: p, filter: f}, nil
}

// applyPatch applies ops to resource res, in order. The op's name is read
// in any case ("Replace", as Entra sends it); an op without a path carries
// an object of attributes, whose names may be URN-qualified.
func applyPatch(res map[string]any, ops []patchOp) error {
	if len(ops) == 0 {
		return invalid(CodeInvalidSyntax, "Operations is required")
	}
	for _, op := range ops {
		name := strings.ToLower(op.Op)
		if name != "add" && name != "replace" && name != "remove" {
			return invalid(CodeInvalidSyntax, "op must be add, replace or remove, not %q", op.Op)
		}
		if op.Path == "" {
			if name == "remove" {
				return invalid(CodeNoTarget, "a remove operation needs a path")
			}
			obj, ok := op.Value.(map[string]any)
			if !ok {
				return invalid(CodeInvalidValue, "an operation without a path needs an object value")
			}
			for k, v := range obj {
				if strings.EqualFold(k, SchemaEnterprise) {
					ext, ok := v.(map[string]any)
					if !ok {
						return invalid(CodeInvalidValue, "%s must be an object", SchemaEnterprise)
					}
					for ek, ev := range ext {
						if err := apply(res, patchPath{attrPath: attrPath{urn: SchemaEnterprise, attr: ek}}, name, ev); err != nil {
							return err
						}
					}
					continue
				}
				p, err := parsePatchPath(k)
				if err != nil {
					return err
				}
				if err := apply(res, p, name, v); err != nil {
					return err
				}
			}
			continue
		}
		p, err := parsePatchPath(op.Path)
		if err != nil {
			return err
		}
		if err := apply(res, p, name, op.Value); err != nil {
			return err
		}
	}
	return nil
}

// apply carries out one operation op on path p of res.
func apply(res map[string]any, p patchPath, op string, v any) error {
	scope := res
	if p.urn != "" {
		ext, _ := getKey(res, p.urn).(map[string]any)
		if ext == nil {
			if op == "remove" {
				return nil
			}
			ext = map[string]any{}
			setKey(res, p.urn, ext)
		}
		scope = ext
		if p.attr == "" {
			return invalid(CodeInvalidPath, "a path must name an attribute")
		}
	}
	cur := getKey(scope, p.attr)
	if p.filter == nil {
		switch {
		case op == "remove" && p.sub == "":
			if arr, ok := cur.([]any); ok && v != nil {
				setKey(scope, p.attr, removeValues(arr, v))
				return nil
			}
			setKey(scope, p.attr, nil)
			delete(scope, p.attr)
		case p.sub == "":
			if arr, ok := cur.([]any); ok && op == "add" {
				if add, ok := v.([]any); ok {
					setKey(scope, p.attr, append(arr, add...))
					return nil
				}
			}
			setKey(scope, p.attr, v)
		default:
			switch c := cur.(type) {
			case map[string]any:
				setSub(c, p.sub, op, v)
			case []any:
				for _, e := range c {
					if m, ok := e.(map[string]any); ok {
						setSub(m, p.sub, op, v)
					}
				}
			case nil:
				if op != "remove" {
					setKey(scope, p.attr, map[string]any{p.sub: v})
				}
			default:
				return invalid(CodeInvalidPath, "%s has no sub-attributes", p.attr)
			}
		}
		return nil
	}
	arr, _ := cur.([]any)
	var kept []any
	matched := false
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok || !p.filter.match(m) {
			kept = append(kept, e)
			continue
		}
		matched = true
		switch {
		case op == "remove" && p.sub == "":
			continue // drop the element
		case p.sub != "":
			setSub(m, p.sub, op, v)
		default:
			if obj, ok := v.(map[string]any); ok {
				for k, x := range obj {
					setKey(m, k, x)
				}
			}
		}
		kept = append(kept, m)
	}
	if !matched && op != "remove" {
		// Entra replaces emails[type eq "work"].value on a user with no
		// work address yet: the element the filter names is added.
		m := eqAttrs(p.filter)
		if p.sub != "" {
			m[p.sub] = v
		} else if obj, ok := v.(map[string]any); ok {
			for k, x := range obj {
				setKey(m, k, x)
			}
		}
		kept = append(kept, m)
	}
	if kept == nil {
		kept = []any{}
	}
	setKey(scope, p.attr, kept)
	return nil
}

func setSub(m map[string]any, sub, op string, v any) {
	if op == "remove" {
		for k := range m {
			if strings.EqualFold(k, sub) {
				delete(m, k)
			}
		}
		return
	}
	setKey(m, sub, v)
}

// removeValues drops from arr the elements whose value is one of v's
// (members removed by value arrays: [{"value": "id"}]).
func removeValues(arr []any, v any) []any {
	vs, ok := v.([]any)
	if !ok {
		vs = []any{v}
	}
	drop := map[string]bool{}
	for _, x := range vs {
		if m, ok := x.(map[string]any); ok {
			if s, ok := getKey(m, "value").(string); ok {
				drop[s] = true
			}
		}
	}
	out := []any{}
	for _, e := range arr {
		if m, ok := e.(map[string]any); ok {
			if s, ok := getKey(m, "value").(string); ok && drop[s] {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// eqAttrs are the attributes a value filter fixes with eq (joined by
// and): the element it names when there is none yet.
func eqAttrs(f filter) map[string]any {
	out := map[string]any{}
	var walk func(f filter)
	walk = func(f filter) {
		switch x := f.(type) {
		case andFilter:
			walk(x.l)
			walk(x.r)
		case compare:
			if x.op == "eq" && x.path.sub == "" && x.path.urn == "" {
				out[x.path.attr] = x.value
			}
		}
	}
	walk(f)
	return out
}
