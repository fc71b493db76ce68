package links

import "github.com/gatehouse/gatehouse/internal/httpjson"

// linkJSON is a Link as the API shows it.
type linkJSON struct {
	ID             string `json:"id"`
	ShortCode      string `json:"shortCode"`
	ShortURL       string `json:"shortUrl"`
	DestinationURL string `json:"destinationUrl"`
	Title          string `json:"title"`
	Active         bool   `json:"active"`
	Archived       bool   `json:"archived"`
	Clicks         int64  `json:"clicks"`
	Created        string `json:"created"`
}

// toLink is l as the API shows it, with its short URL on the service's base.
func (h *handlers) toLink(l *Link) linkJSON {
	return linkJSON{ID: l.ID, ShortCode: l.ShortCode, ShortURL: h.svc.ShortURL(l.ShortCode), DestinationURL: l.DestinationURL,
		Title: l.Title, Active: l.Active, Archived: l.Archived, Clicks: l.Clicks, Created: httpjson.Stamp(l.Created)}
}

// conversionJSON is a Conversion as the API shows it.
type conversionJSON struct {
	ID          string  `json:"id"`
	ClickID     string  `json:"clickId"`
	LinkID      string  `json:"linkId"`
	Name        string  `json:"name"`
	AmountCents *int64  `json:"amountCents"`
	Currency    *string `json:"currency"`
	Created     string  `json:"created"`
}

func toConversion(c *Conversion) conversionJSON {
	return conversionJSON{ID: c.ID, ClickID: c.ClickID, LinkID: c.LinkID, Name: c.Name, AmountCents: c.AmountCents,
		Currency: httpjson.Optional(c.Currency), Created: httpjson.Stamp(c.Created)}
}

// LinkJSON is a Link as the API shows it, for the MCP server's tools
// (internal/mcp), which answer in the same shape.
type LinkJSON = linkJSON

// LinkJSON is l as the API shows it.
func (s *Service) LinkJSON(l *Link) LinkJSON { return (&handlers{svc: s}).toLink(l) }
