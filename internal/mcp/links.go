package mcp

import (
	"context"
	"encoding/json"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/links"
)

type (
	linksOut struct {
		Links      []links.LinkJSON `json:"links"`
		NextCursor *string          `json:"nextCursor"`
	}
	linkOut struct {
		Link links.LinkJSON `json:"link"`
	}
)

// linkProps are the fields of a link create or update (the Links API's body).
var linkProps = map[string]any{
	"destinationUrl": map[string]any{"type": "string", "description": "an absolute http(s) URL"},
	"title":          map[string]any{"type": "string"},
	"shortCode":      map[string]any{"type": "string"},
	"active":         map[string]any{"type": "boolean"},
	"archived":       map[string]any{"type": "boolean"},
}

// linksTools are the Links operations.
func (s *Server) linksTools() []*tool {
	svc := s.cfg.Links
	if svc == nil {
		return nil
	}
	const m = links.Tool
	read, write := gatehouse.Read, gatehouse.Write
	link := func(l *links.Link, verb string) (any, string, error) {
		return linkOut{svc.LinkJSON(l)}, verb + " link " + svc.ShortURL(l.ShortCode) + " to " + l.DestinationURL, nil
	}
	return []*tool{
		{name: "links_list_links", module: m, access: read, title: "List short links", desc: "Lists the workspace's short links.",
			in: object(with(map[string]any{}, pageProps)), out: schemaOf[linksOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				var in page
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				ls, err := svc.List(ctx, p)
				if err != nil {
					return nil, "", err
				}
				items, next, err := pageAs(ls, in, svc.LinkJSON)
				if err != nil {
					return nil, "", err
				}
				return linksOut{Links: items, NextCursor: next}, plural(len(items), "link", "links"), nil
			}},
		{name: "links_get_link", module: m, access: read, title: "Get a short link", desc: "Reads one short link with its click count.",
			in: object(idProp, "id"), out: schemaOf[linkOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				l, err := svc.Get(ctx, p, id)
				if err != nil {
					return nil, "", err
				}
				return link(l, "read")
			}},
		{name: "links_create_link", module: m, access: write, title: "Create a short link",
			desc: "Creates a short link to destinationUrl (a short code is chosen unless given).",
			in:   object(linkProps, "destinationUrl"), out: schemaOf[linkOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				var in links.Input
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				l, err := svc.Create(ctx, p, &in)
				if err != nil {
					return nil, "", err
				}
				return link(l, "created")
			}},
		{name: "links_update_link", module: m, access: write, title: "Update a short link",
			desc: "Changes the fields given of a short link.", in: object(with(idProp, linkProps), "id"), out: schemaOf[linkOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				var in links.Input
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				l, err := svc.Update(ctx, p, id, &in)
				if err != nil {
					return nil, "", err
				}
				return link(l, "updated")
			}},
		{name: "links_delete_link", module: m, access: write, title: "Delete a short link", destructive: true,
			desc: "Deletes a short link; it stops redirecting.", in: object(idProp, "id"), out: schemaOf[message](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				id, err := id(args)
				if err != nil {
					return nil, "", err
				}
				if err := svc.Delete(ctx, p, id); err != nil {
					return nil, "", err
				}
				return message{"link deleted"}, "link deleted", nil
			}},
	}
}
