package mcp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/tools/tasks"
)

// The workspace's issues and links are resources a client can attach as
// context: gatehouse://tasks/issues/{id} and gatehouse://links/links/{id},
// each the API's JSON of the item. They are the caller's, so
// resources/list and resources/read are answered here, per request,
// instead of from the SDK's fixed list.
const (
	issuePrefix = "gatehouse://tasks/issues/"
	linkPrefix  = "gatehouse://links/links/"
)

// resources answers resources/list and resources/read.
func (s *Server) resources(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "resources/list" && method != "resources/read" {
			return next(ctx, method, req)
		}
		p := principalOf(req.GetExtra())
		if p == nil {
			return nil, &jsonError{"no verified caller"}
		}
		if method == "resources/list" {
			params, _ := req.GetParams().(*sdk.ListResourcesParams)
			cursor := ""
			if params != nil {
				cursor = params.Cursor
			}
			return s.listResources(ctx, p, cursor)
		}
		params, _ := req.GetParams().(*sdk.ReadResourceParams)
		if params == nil {
			return nil, sdk.ResourceNotFoundError("")
		}
		return s.readResource(ctx, p, params.URI)
	}
}

// jsonError is a JSON-RPC error with the API's message.
type jsonError struct{ msg string }

func (e *jsonError) Error() string { return e.msg }

// readable reports whether p may read module's items: the tool enabled
// (in the token and in the workspace now) and the token's scopes allowing
// its reads.
func (s *Server) readable(ctx context.Context, p *gatehouse.Principal, module string) bool {
	live, err := s.enabled(ctx, p.OrgID)
	t := &tool{module: module, access: gatehouse.Read}
	return err == nil && t.refusal(p, live) == nil
}

// listResources lists the issues and links p may read, a page at a time.
func (s *Server) listResources(ctx context.Context, p *gatehouse.Principal, cursor string) (*sdk.ListResourcesResult, error) {
	var all []*sdk.Resource
	if s.cfg.Tasks != nil && s.readable(ctx, p, tasks.Tool) {
		is, err := s.cfg.Tasks.List(ctx, p, "", false)
		if err != nil {
			return nil, s.rpcError(ctx, err)
		}
		for _, i := range is {
			all = append(all, &sdk.Resource{URI: issuePrefix + i.ID, Name: "issue-" + i.ID, Title: i.Title, MIMEType: "application/json",
				Description: "Tasks issue " + i.Title})
		}
	}
	if s.cfg.Links != nil && s.readable(ctx, p, links.Tool) {
		ls, err := s.cfg.Links.List(ctx, p)
		if err != nil {
			return nil, s.rpcError(ctx, err)
		}
		for _, l := range ls {
			all = append(all, &sdk.Resource{URI: linkPrefix + l.ID, Name: "link-" + l.ShortCode, Title: cmpTitle(l.Title, l.DestinationURL),
				MIMEType: "application/json", Description: "short link to " + l.DestinationURL})
		}
	}
	items, next, err := pageOf(all, page{Cursor: cursor})
	if err != nil {
		return nil, s.rpcError(ctx, err)
	}
	out := &sdk.ListResourcesResult{Resources: items}
	if next != nil {
		out.NextCursor = *next
	}
	return out, nil
}

// readResource reads one issue or link as the API shows it; anything p
// may not read, or that is not there, is not found.
func (s *Server) readResource(ctx context.Context, p *gatehouse.Principal, uri string) (*sdk.ReadResourceResult, error) {
	var v any
	switch {
	case strings.HasPrefix(uri, issuePrefix) && s.cfg.Tasks != nil && s.readable(ctx, p, tasks.Tool):
		i, err := s.cfg.Tasks.Get(ctx, p, strings.TrimPrefix(uri, issuePrefix))
		if err != nil {
			return nil, s.notFound(ctx, uri, err)
		}
		v = map[string]any{"issue": tasks.ToIssueJSON(i)}
	case strings.HasPrefix(uri, linkPrefix) && s.cfg.Links != nil && s.readable(ctx, p, links.Tool):
		l, err := s.cfg.Links.Get(ctx, p, strings.TrimPrefix(uri, linkPrefix))
		if err != nil {
			return nil, s.notFound(ctx, uri, err)
		}
		v = map[string]any{"link": s.cfg.Links.LinkJSON(l)}
	default:
		return nil, sdk.ResourceNotFoundError(uri)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// notFound is err for a resource: not found as the protocol says it, any
// other refusal with the API's message.
func (s *Server) notFound(ctx context.Context, uri string, err error) error {
	if gatehouse.ErrorKind(err) == gatehouse.KindNotFound {
		return sdk.ResourceNotFoundError(uri)
	}
	return s.rpcError(ctx, err)
}

// rpcError is err as a JSON-RPC error: its safe message; an error without
// a kind is logged and answered without its cause.
func (s *Server) rpcError(ctx context.Context, err error) error {
	r := s.toolError(ctx, &tool{name: "resources"}, err)
	return &jsonError{textOf(r)}
}

// textOf is a result's first text.
func textOf(r *sdk.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func cmpTitle(title, dest string) string {
	if title != "" {
		return title
	}
	return dest
}
