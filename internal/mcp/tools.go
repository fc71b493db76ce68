package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// tool is one MCP tool: an operation of a tool API (module), what it
// does (read or write, as the HTTP route declares), its schemas, and the
// call of the domain method.
type tool struct {
	name, module string
	access       gatehouse.Access
	title, desc  string
	destructive  bool
	in           map[string]any     // the input's JSON Schema
	out          *jsonschema.Schema // the structured result's
	// call decodes args as the HTTP handler decodes its request, calls the
	// domain, and returns the structured result and a short text.
	call func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error)
}

// sdkTool is t as tools/list shows it.
func (t *tool) sdkTool() *sdk.Tool {
	open, destructive := false, t.destructive
	a := &sdk.ToolAnnotations{Title: t.title, ReadOnlyHint: t.access == gatehouse.Read, OpenWorldHint: &open}
	if t.access == gatehouse.Write {
		a.DestructiveHint = &destructive
	}
	return &sdk.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: t.in, OutputSchema: t.out, Annotations: a}
}

// refusal is why p may not call t (the kernel's rules of a tool route):
// the tool not listed by the token or, live (nil: not read), no longer
// enabled in the workspace, or the token's scopes not allowing it; nil
// when it may.
func (t *tool) refusal(p *gatehouse.Principal, live []string) error {
	if !slices.Contains(p.Tools, t.module) || (live != nil && !slices.Contains(live, t.module)) {
		return gatehouse.Errorf(gatehouse.KindForbidden, "the %s tool is not enabled for this workspace", t.module)
	}
	if !gatehouse.ScopeAllows(p.Scope, t.module, t.access) {
		return gatehouse.Errorf(gatehouse.KindForbidden, "this access token's scope does not allow this operation; it needs %s",
			gatehouse.ToolScope(t.module, t.access))
	}
	return nil
}

// callHandler runs t for a tools/call: a refusal or a domain error is a
// tool error (isError, the API's message); a result is structuredContent
// with a short text.
func (s *Server) callHandler(t *tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p := principalOf(req.GetExtra())
		if p == nil {
			return nil, errors.New("no verified caller")
		}
		live, err := s.enabled(ctx, p.OrgID)
		if err != nil {
			return s.toolError(ctx, t, err), nil
		}
		if err := t.refusal(p, live); err != nil {
			return s.toolError(ctx, t, err), nil
		}
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		out, text, err := t.call(ctx, p, args)
		if err != nil {
			return s.toolError(ctx, t, err), nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: out}, nil
	}
}

// toolError is err as a tool error: its safe message, as the API writes
// it; an error without a kind is logged and answered without its cause.
func (s *Server) toolError(ctx context.Context, t *tool, err error) *sdk.CallToolResult {
	msg := "internal server error"
	var e *gatehouse.Error
	if errors.As(err, &e) && e.Kind != gatehouse.KindInternal && e.Message != "" {
		msg = e.Message
	} else if httpjson.TooBig(err) {
		msg = "request body too large"
	} else {
		s.log.ErrorContext(ctx, "mcp tool", "tool", t.name, "err", err)
	}
	r := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}}
	r.IsError = true
	return r
}

// decode reads a tool's arguments as the API reads a body (the same
// answers for bad input); none read as {}.
func decode(args json.RawMessage, dst any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	return httpjson.DecodeBytes(args, dst)
}

// idArgs are the arguments of a tool on one item.
type idArgs struct {
	ID *string `json:"id"`
}

// id is the item a tool's arguments name; required.
func id(args json.RawMessage) (string, error) {
	var in idArgs
	if err := decode(args, &in); err != nil {
		return "", err
	}
	if in.ID == nil || *in.ID == "" {
		return "", gatehouse.InvalidField("id", "id is required")
	}
	return *in.ID, nil
}

// page bounds a list tool's answer: at most limit items (default and most
// maxPage) after the cursor, and the cursor of the next page ("" at the
// end). A cursor is an opaque offset into the list the domain returns.
type page struct {
	Cursor string `json:"cursor"`
	Limit  *int   `json:"limit"`
}

const defaultPage, maxPage = 50, 200

// pageOf is the page of items p asks for, with the next cursor.
func pageOf[T any](items []T, p page) ([]T, *string, error) {
	start := 0
	if p.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		n, err2 := strconv.Atoi(string(raw))
		if err != nil || err2 != nil || n < 0 {
			return nil, nil, gatehouse.InvalidField("cursor", "cursor is not one this server gave")
		}
		start = n
	}
	limit := defaultPage
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > maxPage {
			return nil, nil, gatehouse.InvalidField("limit", "limit must be between 1 and %d", maxPage)
		}
		limit = *p.Limit
	}
	if start > len(items) {
		start = len(items)
	}
	end := min(start+limit, len(items))
	var next *string
	if end < len(items) {
		c := base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
		next = &c
	}
	return items[start:end], next, nil
}

// pageAs is pageOf with each item of the page converted by conv (to the
// API's JSON of it), as every list tool answers.
func pageAs[T, J any](items []T, p page, conv func(T) J) ([]J, *string, error) {
	got, next, err := pageOf(items, p)
	if err != nil {
		return nil, nil, err
	}
	out := make([]J, len(got))
	for i, it := range got {
		out[i] = conv(it)
	}
	return out, next, nil
}

// pageProps are the input properties of a list tool's page.
var pageProps = map[string]any{
	"cursor": map[string]any{"type": "string", "description": "the nextCursor of the previous page"},
	"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": maxPage, "description": fmt.Sprintf("at most this many items (default %d)", defaultPage)},
}

// object is an input schema: an object with props, the required ones
// named.
func object(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// with adds the page's properties to props.
func with(props map[string]any, more map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range props {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var idProp = map[string]any{"id": map[string]any{"type": "string", "description": "the item's id"}}

// schemaOf is the output schema of T.
func schemaOf[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema: %v", err))
	}
	return s
}

// message is the result of a delete.
type message struct {
	Message string `json:"message"`
}

// plural is "n things".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// allTools are every tool, in the order tools/list shows them.
func (s *Server) allTools() []*tool {
	var out []*tool
	for _, ts := range [][]*tool{s.tasksTools(), s.linksTools(), s.formsTools(), s.signTools()} {
		out = append(out, ts...)
	}
	return out
}
