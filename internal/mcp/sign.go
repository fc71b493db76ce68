package mcp

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/sign"
)

// documentSchema is a Sign document as the API shows it (TOOLS.md), an
// object described there.
var documentSchema = &jsonschema.Schema{Type: "object", Description: "a Sign document (TOOLS.md)"}

var (
	documentsOutSchema = &jsonschema.Schema{Type: "object", Required: []string{"documents", "nextCursor"},
		Properties: map[string]*jsonschema.Schema{"documents": {Type: "array", Items: documentSchema}, "nextCursor": {Types: []string{"string", "null"}}}}
	documentOutSchema = &jsonschema.Schema{Type: "object", Required: []string{"document"},
		Properties: map[string]*jsonschema.Schema{"document": documentSchema}}
)

// signTools are the Sign operations.
func (s *Server) signTools() []*tool {
	svc := s.cfg.Sign
	if svc == nil {
		return nil
	}
	const m = sign.Tool
	read, write := gatehouse.Read, gatehouse.Write
	doc := func(d *sign.Document, verb string) (any, string, error) {
		return map[string]any{"document": svc.DocumentJSON(d)}, verb + " document " + d.ID + " (" + d.Name + "): " + d.Status, nil
	}
	one := func(fn func(ctx context.Context, p *gatehouse.Principal, id string, args json.RawMessage) (*sign.Document, error), verb string) func(context.Context, *gatehouse.Principal, json.RawMessage) (any, string, error) {
		return func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
			id, err := id(args)
			if err != nil {
				return nil, "", err
			}
			d, err := fn(ctx, p, id, args)
			if err != nil {
				return nil, "", err
			}
			return doc(d, verb)
		}
	}
	return []*tool{
		{name: "sign_list_documents", module: m, access: read, title: "List documents", desc: "Lists the workspace's documents for signature.",
			in: object(with(map[string]any{}, pageProps)), out: documentsOutSchema,
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				var in page
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				ds, err := svc.List(ctx, p)
				if err != nil {
					return nil, "", err
				}
				items, next, err := pageAs(ds, in, svc.DocumentJSON)
				if err != nil {
					return nil, "", err
				}
				return map[string]any{"documents": items, "nextCursor": next}, plural(len(items), "document", "documents"), nil
			}},
		{name: "sign_get_document", module: m, access: read, title: "Get a document",
			desc: "Reads one document with its recipients and fields.", in: object(idProp, "id"), out: documentOutSchema,
			call: one(func(ctx context.Context, p *gatehouse.Principal, id string, _ json.RawMessage) (*sign.Document, error) {
				return svc.Get(ctx, p, id)
			}, "read")},
		{name: "sign_send_document", module: m, access: write, title: "Send a document",
			desc: "Sends a draft document to its recipients for signature.", in: object(idProp, "id"), out: documentOutSchema,
			call: one(func(ctx context.Context, p *gatehouse.Principal, id string, _ json.RawMessage) (*sign.Document, error) {
				return svc.Send(ctx, p, id)
			}, "sent")},
		{name: "sign_void_document", module: m, access: write, title: "Void a document", destructive: true,
			desc: "Voids a sent document: its recipients can no longer sign.",
			in:   object(with(idProp, map[string]any{"reason": map[string]any{"type": "string"}}), "id"), out: documentOutSchema,
			call: one(func(ctx context.Context, p *gatehouse.Principal, id string, args json.RawMessage) (*sign.Document, error) {
				var in struct {
					Reason string `json:"reason"`
				}
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				return svc.Void(ctx, p, id, in.Reason)
			}, "voided")},
		{name: "sign_duplicate_document", module: m, access: write, title: "Duplicate a document",
			desc: "Copies a document into a new draft, optionally renamed.",
			in:   object(with(idProp, map[string]any{"name": map[string]any{"type": "string"}}), "id"), out: documentOutSchema,
			call: one(func(ctx context.Context, p *gatehouse.Principal, id string, args json.RawMessage) (*sign.Document, error) {
				var in struct {
					Name *string `json:"name"`
				}
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				return svc.Duplicate(ctx, p, id, in.Name)
			}, "duplicated")},
	}
}
