package mcp

import (
	"context"
	"encoding/json"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/tools/forms"
)

type (
	formsOut struct {
		Forms      []forms.FormJSON `json:"forms"`
		NextCursor *string          `json:"nextCursor"`
	}
	submissionsOut struct {
		Submissions []forms.SubmissionJSON `json:"submissions"`
		NextCursor  *string                `json:"nextCursor"`
	}
)

// formsTools are the Forms operations.
func (s *Server) formsTools() []*tool {
	svc := s.cfg.Forms
	if svc == nil {
		return nil
	}
	const m = forms.Tool
	return []*tool{
		{name: "forms_list_forms", module: m, access: gatehouse.Read, title: "List forms", desc: "Lists the workspace's forms.",
			in: object(with(map[string]any{}, pageProps)), out: schemaOf[formsOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				var in page
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				fs, err := svc.List(ctx, p)
				if err != nil {
					return nil, "", err
				}
				items, next, err := pageAs(fs, in, svc.FormJSON)
				if err != nil {
					return nil, "", err
				}
				return formsOut{Forms: items, NextCursor: next}, plural(len(items), "form", "forms"), nil
			}},
		{name: "forms_list_submissions", module: m, access: gatehouse.Read, title: "List a form's submissions",
			desc: "Lists the submissions of a form, newest first.",
			in:   object(with(map[string]any{"formId": map[string]any{"type": "string"}}, pageProps), "formId"), out: schemaOf[submissionsOut](),
			call: func(ctx context.Context, p *gatehouse.Principal, args json.RawMessage) (any, string, error) {
				var in struct {
					FormID *string `json:"formId"`
					page
				}
				if err := decode(args, &in); err != nil {
					return nil, "", err
				}
				if in.FormID == nil || *in.FormID == "" {
					return nil, "", gatehouse.InvalidField("formId", "formId is required")
				}
				subs, err := svc.Submissions(ctx, p, *in.FormID)
				if err != nil {
					return nil, "", err
				}
				items, next, err := pageAs(subs, in.page, forms.ToSubmissionJSON)
				if err != nil {
					return nil, "", err
				}
				return submissionsOut{Submissions: items, NextCursor: next}, plural(len(items), "submission", "submissions"), nil
			}},
	}
}
