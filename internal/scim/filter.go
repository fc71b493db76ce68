package scim

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/gatehouse/gatehouse"
)

// A filter (RFC 7644 section 3.4.2.2) parsed into a tree and matched
// against a rendered resource. Our own small parser: see
// docs/decisions.md.

// filter is a parsed filter expression.
type filter interface {
	match(res map[string]any) bool
}

type andFilter struct{ l, r filter }
type orFilter struct{ l, r filter }
type notFilter struct{ f filter }

// compare is "path op value" ("pr" has no value).
type compare struct {
	path  attrPath
	op    string
	value any
}

// valueFilter is "attr[filter]": some element of multi-valued attr matches.
type valueFilter struct {
	path attrPath
	f    filter
}

func (f andFilter) match(res map[string]any) bool { return f.l.match(res) && f.r.match(res) }
func (f orFilter) match(res map[string]any) bool  { return f.l.match(res) || f.r.match(res) }
func (f notFilter) match(res map[string]any) bool { return !f.f.match(res) }

func (f valueFilter) match(res map[string]any) bool {
	for _, v := range f.path.values(res) {
		if m, ok := v.(map[string]any); ok && f.f.match(m) {
			return true
		}
	}
	return false
}

func (f compare) match(res map[string]any) bool {
	vs := f.path.values(res)
	if f.op == "pr" {
		for _, v := range vs {
			if v != nil && v != "" {
				return true
			}
		}
		return false
	}
	for _, v := range vs {
		if compareOne(v, f.op, f.value, f.path.caseExact()) {
			return true
		}
	}
	return f.op == "ne" && len(vs) == 0 && f.value != nil
}

// compareOne applies op to an attribute value and the filter's value.
func compareOne(v any, op string, want any, exact bool) bool {
	if b, ok := want.(bool); ok {
		got, ok := boolOf(v)
		switch op {
		case "eq":
			return ok && got == b
		case "ne":
			return !ok || got != b
		}
		return false
	}
	if n, ok := want.(float64); ok {
		got, ok := v.(float64)
		if !ok {
			return false
		}
		switch op {
		case "eq":
			return got == n
		case "ne":
			return got != n
		case "gt":
			return got > n
		case "ge":
			return got >= n
		case "lt":
			return got < n
		case "le":
			return got <= n
		}
		return false
	}
	if want == nil {
		return (op == "eq") == (v == nil)
	}
	ws, _ := want.(string)
	gs, ok := v.(string)
	if !ok {
		return op == "ne"
	}
	if !exact {
		ws, gs = strings.ToLower(ws), strings.ToLower(gs)
	}
	switch op {
	case "eq":
		return gs == ws
	case "ne":
		return gs != ws
	case "co":
		return strings.Contains(gs, ws)
	case "sw":
		return strings.HasPrefix(gs, ws)
	case "ew":
		return strings.HasSuffix(gs, ws)
	case "gt":
		return gs > ws
	case "ge":
		return gs >= ws
	case "lt":
		return gs < ws
	case "le":
		return gs <= ws
	}
	return false
}

// boolOf reads a boolean, also as the strings Entra sends ("True").
func boolOf(v any) (bool, bool) {
	switch b := v.(type) {
	case bool:
		return b, true
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// attrPath is an attribute, in an extension's schema (urn) or the core
// one, with an optional sub-attribute.
type attrPath struct {
	urn, attr, sub string
}

// caseExact reports whether the attribute compares case-exact (RFC 7643:
// id and externalId).
func (p attrPath) caseExact() bool {
	return p.urn == "" && p.sub == "" && (strings.EqualFold(p.attr, "id") || strings.EqualFold(p.attr, "externalId"))
}

// values are the attribute's values in res, multi-valued attributes and
// their sub-attributes flattened.
func (p attrPath) values(res map[string]any) []any {
	scope := res
	if p.urn != "" {
		m, _ := getKey(res, p.urn).(map[string]any)
		if m == nil {
			return nil
		}
		scope = m
	}
	v := getKey(scope, p.attr)
	var vs []any
	if arr, ok := v.([]any); ok {
		vs = arr
	} else if v != nil {
		vs = []any{v}
	}
	if p.sub == "" {
		return vs
	}
	var out []any
	for _, e := range vs {
		if m, ok := e.(map[string]any); ok {
			if sv := getKey(m, p.sub); sv != nil {
				out = append(out, sv)
			}
		}
	}
	return out
}

// getKey reads m's attribute name in any case (attribute names are case
// insensitive).
func getKey(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// setKey sets m's attribute name, replacing it in whatever case it was.
func setKey(m map[string]any, name string, v any) {
	for k := range m {
		if strings.EqualFold(k, name) {
			delete(m, k)
		}
	}
	m[name] = v
}

// splitURN splits an attribute path that begins with a schema URN.
func splitURN(s string) (urn, rest string, err error) {
	if !strings.HasPrefix(strings.ToLower(s), "urn:") {
		return "", s, nil
	}
	for _, schema := range []string{SchemaUser, SchemaEnterprise, SchemaGroup} {
		if len(s) > len(schema) && strings.EqualFold(s[:len(schema)], schema) && s[len(schema)] == ':' {
			if schema == SchemaEnterprise {
				return SchemaEnterprise, s[len(schema)+1:], nil
			}
			return "", s[len(schema)+1:], nil
		}
		if strings.EqualFold(s, schema) {
			return schema, "", nil
		}
	}
	return "", "", invalid(CodeInvalidPath, "unknown schema in attribute path %q", s)
}

// parseAttrPath parses "urn:…:attr.sub", "attr.sub" or "attr".
func parseAttrPath(s string) (attrPath, error) {
	urn, rest, err := splitURN(s)
	if err != nil {
		return attrPath{}, err
	}
	attr, sub, _ := strings.Cut(rest, ".")
	if attr == "" || !validName(attr) || (sub != "" && !validName(sub)) {
		return attrPath{}, invalid(CodeInvalidPath, "invalid attribute path %q", s)
	}
	return attrPath{urn: urn, attr: attr, sub: sub}, nil
}

func validName(s string) bool {
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '$' && i == 0 || i > 0 && (unicode.IsDigit(r) || r == '_' || r == '-')) {
			return false
		}
	}
	return s != ""
}

// parseFilter parses a filter expression.
func parseFilter(s string) (filter, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.toks) {
		return nil, invalid(CodeInvalidFilter, "unexpected %q in filter", p.toks[p.i].s)
	}
	return f, nil
}

// token kinds of a filter.
const (
	tokWord = iota
	tokString
	tokPunct
)

type tok struct {
	kind int
	s    string
	v    any // a string token's value
}

func lex(s string) ([]tok, error) {
	var out []tok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')' || c == '[' || c == ']':
			out = append(out, tok{kind: tokPunct, s: string(c)})
			i++
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, invalid(CodeInvalidFilter, "unterminated string in filter")
			}
			var v string
			if err := json.Unmarshal([]byte(s[i:j+1]), &v); err != nil {
				return nil, invalid(CodeInvalidFilter, "invalid string in filter")
			}
			out = append(out, tok{kind: tokString, s: s[i : j+1], v: v})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t()[]\"", rune(s[j])) {
				j++
			}
			out = append(out, tok{kind: tokWord, s: s[i:j]})
			i = j
		}
	}
	return out, nil
}

type parser struct {
	toks []tok
	i    int
}

func (p *parser) peekWord(w string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == tokWord && strings.EqualFold(p.toks[p.i].s, w)
}

func (p *parser) peekPunct(c string) bool {
	return p.i < len(p.toks) && p.toks[p.i].kind == tokPunct && p.toks[p.i].s == c
}

func (p *parser) or() (filter, error) {
	l, err := p.and()
	for err == nil && p.peekWord("or") {
		p.i++
		var r filter
		if r, err = p.and(); err == nil {
			l = orFilter{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (filter, error) {
	l, err := p.factor()
	for err == nil && p.peekWord("and") {
		p.i++
		var r filter
		if r, err = p.factor(); err == nil {
			l = andFilter{l, r}
		}
	}
	return l, err
}

var ops = map[string]bool{"eq": true, "ne": true, "co": true, "sw": true, "ew": true, "gt": true, "ge": true, "lt": true, "le": true}

func (p *parser) factor() (filter, error) {
	if p.peekWord("not") {
		p.i++
		if !p.peekPunct("(") {
			return nil, invalid(CodeInvalidFilter, "not must be followed by a parenthesized filter")
		}
		f, err := p.factor()
		return notFilter{f}, err
	}
	if p.peekPunct("(") {
		p.i++
		f, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.peekPunct(")") {
			return nil, invalid(CodeInvalidFilter, "missing ) in filter")
		}
		p.i++
		return f, nil
	}
	if p.i >= len(p.toks) || p.toks[p.i].kind != tokWord {
		return nil, invalid(CodeInvalidFilter, "an attribute path was expected in filter")
	}
	path, err := parseAttrPath(p.toks[p.i].s)
	if err != nil {
		return nil, invalid(CodeInvalidFilter, "invalid attribute path %q in filter", p.toks[p.i].s)
	}
	p.i++
	if p.peekPunct("[") {
		p.i++
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.peekPunct("]") {
			return nil, invalid(CodeInvalidFilter, "missing ] in filter")
		}
		p.i++
		return valueFilter{path: path, f: inner}, nil
	}
	if p.i >= len(p.toks) || p.toks[p.i].kind != tokWord {
		return nil, invalid(CodeInvalidFilter, "an operator was expected in filter")
	}
	op := strings.ToLower(p.toks[p.i].s)
	p.i++
	if op == "pr" {
		return compare{path: path, op: op}, nil
	}
	if !ops[op] {
		return nil, invalid(CodeInvalidFilter, "unknown operator %q in filter", op)
	}
	if p.i >= len(p.toks) || p.toks[p.i].kind == tokPunct {
		return nil, invalid(CodeInvalidFilter, "a value was expected in filter")
	}
	t := p.toks[p.i]
	p.i++
	if t.kind == tokString {
		return compare{path: path, op: op, value: t.v}, nil
	}
	var v any
	switch strings.ToLower(t.s) {
	case "true":
		v = true
	case "false":
		v = false
	case "null":
		v = nil
	default:
		if err := json.Unmarshal([]byte(t.s), &v); err != nil {
			return nil, invalid(CodeInvalidFilter, "invalid value %q in filter", t.s)
		}
		if _, ok := v.(float64); !ok {
			return nil, invalid(CodeInvalidFilter, "invalid value %q in filter", t.s)
		}
	}
	return compare{path: path, op: op, value: v}, nil
}

// eqLookup is the store lookup a filter "userName eq …" or "externalId eq
// …" allows, so such a list reads one indexed row instead of the
// directory.
func eqLookup(f filter) (Lookup, bool) {
	c, ok := f.(compare)
	if !ok || c.op != "eq" || c.path.urn != "" || c.path.sub != "" {
		return Lookup{}, false
	}
	s, ok := c.value.(string)
	if !ok || s == "" {
		return Lookup{}, false
	}
	switch strings.ToLower(c.path.attr) {
	case "username":
		return Lookup{UserNameKey: gatehouse.EmailKey(s)}, true
	case "externalid":
		return Lookup{ExternalID: s}, true
	}
	return Lookup{}, false
}
