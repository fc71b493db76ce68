package gatehouse

import (
	"slices"
	"strings"
)

// The OAuth scope vocabulary: the one list of the words a client may ask
// for, what each allows in plain words (the consent pages), and the tool
// scopes the tool APIs enforce. The authorization server validates
// requests against it; the kernel checks tool requests against it.

// The OpenID Connect scopes (their meaning is the OpenID provider's).
const (
	ScopeOpenID        = "openid"
	ScopeProfile       = "profile"
	ScopeEmail         = "email"
	ScopeOfflineAccess = "offline_access"
)

// Access is what a tool operation does: read (GET) or write (anything
// else). Each tool's Mount declares it per route.
type Access string

// The two accesses of a tool operation.
const (
	Read  Access = "read"
	Write Access = "write"
)

// ScopeTools are the tools with an API, each with a read and a write
// scope ("tasks:read", "tasks:write", ...).
var ScopeTools = []string{"tasks", "links", "forms", "sign"}

// ToolScope is the scope that allows access on tool's API.
func ToolScope(tool string, access Access) string { return tool + ":" + string(access) }

// scopeWords are the known scopes in the order metadata lists them, with
// what each allows in plain words.
var scopeWords = []struct{ name, says string }{
	{ScopeOpenID, "Confirm who you are"},
	{ScopeProfile, "See your name and picture"},
	{ScopeEmail, "See your email address"},
	{ScopeOfflineAccess, "Keep access while you are away"},
	{"tasks:read", "Read your tasks"},
	{"tasks:write", "Create, change and delete your tasks"},
	{"links:read", "Read your short links and their webhooks"},
	{"links:write", "Create, change and delete your short links and their webhooks"},
	{"forms:read", "Read your forms and their submissions"},
	{"forms:write", "Create and change your forms and where their submissions go"},
	{"sign:read", "Read your documents for signature and their webhooks"},
	{"sign:write", "Create, send, void and change your documents for signature and their webhooks"},
}

// ScopesSupported lists every known scope (the scopes_supported of the
// metadata documents).
func ScopesSupported() []string {
	out := make([]string, len(scopeWords))
	for i, w := range scopeWords {
		out[i] = w.name
	}
	return out
}

// ToolScopes lists the scopes of tool, read then write (the
// scopes_supported of the tool's resource metadata); every tool scope
// when tool is "".
func ToolScopes(tool string) []string {
	var out []string
	for _, t := range ScopeTools {
		if tool == "" || tool == t {
			out = append(out, ToolScope(t, Read), ToolScope(t, Write))
		}
	}
	return out
}

// KnownScope reports whether word is a scope of the vocabulary.
func KnownScope(word string) bool {
	return slices.ContainsFunc(scopeWords, func(w struct{ name, says string }) bool { return w.name == word })
}

// ScopeSays is what scope allows in plain words; "" for an unknown one.
func ScopeSays(scope string) string {
	for _, w := range scopeWords {
		if w.name == scope {
			return w.says
		}
	}
	return ""
}

// IsToolScope reports whether word is a tool's read or write scope.
func IsToolScope(word string) bool {
	tool, access, ok := strings.Cut(word, ":")
	return ok && (access == string(Read) || access == string(Write)) && slices.Contains(ScopeTools, tool)
}

// Scopes splits a scope string (RFC 6749 §3.3: space-separated, order
// irrelevant) into its words, each once, in the order given.
func Scopes(scope string) []string {
	var out []string
	for _, w := range strings.Fields(scope) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// ToolScoped reports whether scope names any tool scope: a token that
// asked for one may do on the tool APIs only what its scopes allow; a
// token that asked for none keeps the unscoped behaviour (every enabled
// tool, read and write).
func ToolScoped(scope string) bool { return slices.ContainsFunc(Scopes(scope), IsToolScope) }

// ScopeAllows reports whether a token granted scope may do access on
// tool's API. A write scope does not imply read (docs/decisions.md).
func ScopeAllows(scope, tool string, access Access) bool {
	if !ToolScoped(scope) {
		return true
	}
	return slices.Contains(Scopes(scope), ToolScope(tool, access))
}

// ResourceTool names the tool API that resource (an RFC 8707 resource
// indicator) designates under apiURL, the base of the tool APIs: "tasks"
// for apiURL/tasks or any URL under it, AllTools for apiURL itself (every
// tool API), "" for anything else.
func ResourceTool(resource, apiURL string) string {
	apiURL = strings.TrimRight(apiURL, "/")
	r := strings.TrimRight(resource, "/")
	if apiURL == "" || strings.ContainsAny(r, "?#") {
		return ""
	}
	if r == apiURL {
		return AllTools
	}
	rest, ok := strings.CutPrefix(r, apiURL+"/")
	if !ok {
		return ""
	}
	tool, _, _ := strings.Cut(rest, "/")
	return tool
}

// AllTools is ResourceTool's answer for the base of the tool APIs.
const AllTools = "*"
