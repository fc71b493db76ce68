package sign

import "github.com/gatehouse/gatehouse/internal/httpjson"

// The JSON shapes of TOOLS.md's Sign API. They are maps, whose keys the
// encoder writes in sorted order, as the API has always answered.

// toDocument is the Document of TOOLS.md, with its recipients and fields;
// the fields it does not support yet (templates, reminders, notarisation,
// groups) have their empty values.
func (h *handlers) toDocument(d *Document) map[string]any {
	stamp, stampPtr, optional := httpjson.Stamp, httpjson.StampPtr, httpjson.Optional
	recipients := make([]map[string]any, len(d.Recipients))
	for k, r := range d.Recipients {
		recipients[k] = toRecipient(d, r)
	}
	fields := make([]map[string]any, len(d.Fields))
	for k, f := range d.Fields {
		fields[k] = map[string]any{"id": f.ID, "type": f.Type, "x": f.X, "y": f.Y, "width": f.Width, "height": f.Height,
			"page": f.Page, "required": f.Required, "label": f.Label, "value": f.Value, "recipientId": optional(f.RecipientID),
			"fileId": d.ID, "config": map[string]any{}}
	}
	return map[string]any{"id": d.ID, "name": d.Name, "url": h.svc.FileURL(d.ID), "status": d.Status, "signingMode": "parallel",
		"message": d.Message, "visibility": "private", "ownerId": d.OwnerID, "templateId": nil, "voidReason": optional(d.VoidReason),
		"notaryState": nil, "created": stamp(d.Created), "modified": stamp(d.Modified), "sentAt": stampPtr(d.SentAt),
		"completedAt": stampPtr(d.CompletedAt), "voidedAt": stampPtr(d.VoidedAt), "declinedAt": stampPtr(d.DeclinedAt),
		"expiresAt": stampPtr(d.ExpiresAt), "lastRemindedAt": stampPtr(d.LastRemindedAt),
		"scheduledPurgeAt": stampPtr(h.svc.ScheduledPurge(d)), "purgedAt": stampPtr(d.PurgedAt), "size": d.Size, "pages": d.Pages, "autoRemindDays": d.AutoRemindDays,
		"hasFile": d.PurgedAt == nil, "hasFinalFile": false, // no signed PDF is rendered yet
		"legalHold": d.LegalHold, "requiresNotarization": false,
		"files":      files(d),
		"recipients": recipients, "fields": fields}
}

// files lists the document's one file; none once purged.
func files(d *Document) []map[string]any {
	if d.PurgedAt != nil {
		return []map[string]any{}
	}
	return []map[string]any{{"id": d.ID, "name": d.Name, "position": 0, "size": d.Size, "pages": d.Pages,
		"created": httpjson.Stamp(d.Created), "status": "ready", "conversionError": nil}}
}

// toRecipient is a recipient of d as its owner sees it; a signer who
// signed carries their signature field's value.
func toRecipient(d *Document, r *Recipient) map[string]any {
	stampPtr := httpjson.StampPtr
	rec := map[string]any{"id": r.ID, "name": r.Name, "email": r.Email, "role": r.Role, "status": r.Status,
		"orderIndex": r.OrderIndex, "signedAt": stampPtr(r.SignedAt), "viewedAt": stampPtr(r.ViewedAt),
		"declinedAt": stampPtr(r.DeclinedAt), "declineReason": httpjson.Optional(r.DeclineReason), "hasAccessCode": false,
		"signature": nil, "isGroup": false, "groupLabel": nil, "signedByName": nil, "signedByEmail": nil,
		"members": []any{}, "reassignedFromName": nil, "reassignedFromEmail": nil, "reassignReason": nil, "reassignedAt": nil}
	if r.Status == Signed {
		rec["signedByName"], rec["signedByEmail"] = r.Name, r.Email
		for _, f := range d.Fields {
			if f.RecipientID == r.ID && f.Type == "signature" && f.Value != nil {
				rec["signature"] = *f.Value
			}
		}
	}
	return rec
}

// publicView is what a recipient sees: the document, themselves, and the
// fields they fill.
func publicView(d *Document, rc *Recipient) map[string]any {
	var fields []map[string]any
	for _, f := range d.Fields {
		if f.RecipientID == rc.ID {
			fields = append(fields, map[string]any{"id": f.ID, "type": f.Type, "page": f.Page, "x": f.X, "y": f.Y,
				"width": f.Width, "height": f.Height, "required": f.Required, "label": f.Label, "value": f.Value})
		}
	}
	if fields == nil {
		fields = []map[string]any{}
	}
	return map[string]any{"document": map[string]any{"id": d.ID, "name": d.Name, "message": d.Message, "status": d.Status, "pages": d.Pages},
		"recipient": map[string]any{"id": rc.ID, "name": rc.Name, "email": rc.Email, "role": rc.Role, "status": rc.Status},
		"fields":    fields}
}

// DocumentJSON is d as the API shows it, for the MCP server's tools
// (internal/mcp), which answer in the same shape.
func (s *Service) DocumentJSON(d *Document) map[string]any { return (&handlers{svc: s}).toDocument(d) }
