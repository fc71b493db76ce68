package web

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
	"github.com/gatehouse/gatehouse/internal/tools/links"
	"github.com/gatehouse/gatehouse/internal/webhooks"
)

// linkRoutes serves the Links tool API of TOOLS.md under /links/v1/ and
// the public redirect under /l/, the path of the default
// GATEHOUSE_SHORT_LINK_URL ({api_url}/l).
func (s *Server) linkRoutes(m *http.ServeMux) {
	t := func(h AuthedFunc) http.Handler { return s.Tool(links.Tool, h) }
	m.Handle("POST /links/v1/links", t(s.handleCreateLink))
	m.Handle("GET /links/v1/links", t(s.handleLinks))
	m.Handle("GET /links/v1/links/{id}", t(s.handleLink))
	m.Handle("PATCH /links/v1/links/{id}", t(s.handleUpdateLink))
	m.Handle("DELETE /links/v1/links/{id}", t(s.handleDeleteLink))
	m.Handle("POST /links/v1/conversions", t(s.handleConversion))
	m.Handle("GET /l/{code}", s.handle(s.handleFollow))
	if s.webhooks != nil {
		s.webhookRoutes(m, "/links/v1", webhooks.Links, true)
	}
}

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

func (s *Server) toLink(l *links.Link) linkJSON {
	return linkJSON{ID: l.ID, ShortCode: l.ShortCode, ShortURL: s.links.ShortURL(l.ShortCode), DestinationURL: l.DestinationURL,
		Title: l.Title, Active: l.Active, Archived: l.Archived, Clicks: l.Clicks, Created: stamp(l.Created)}
}

func (s *Server) handleCreateLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in links.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	l, err := s.links.Create(r.Context(), p, &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"link": s.toLink(l)})
	return nil
}

func (s *Server) handleLinks(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	ls, err := s.links.List(r.Context(), p)
	if err != nil {
		return err
	}
	out := make([]linkJSON, len(ls))
	for k, l := range ls {
		out[k] = s.toLink(l)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"links": out})
	return nil
}

func (s *Server) handleLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	l, err := s.links.Get(r.Context(), p, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"link": s.toLink(l)})
	return nil
}

func (s *Server) handleUpdateLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in links.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	l, err := s.links.Update(r.Context(), p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"link": s.toLink(l)})
	return nil
}

func (s *Server) handleDeleteLink(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	if err := s.links.Delete(r.Context(), p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"link deleted"})
	return nil
}

type conversionJSON struct {
	ID          string  `json:"id"`
	ClickID     string  `json:"clickId"`
	LinkID      string  `json:"linkId"`
	Name        string  `json:"name"`
	AmountCents *int64  `json:"amountCents"`
	Currency    *string `json:"currency"`
	Created     string  `json:"created"`
}

func (s *Server) handleConversion(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error {
	var in links.ConversionInput
	if err := decode(r, &in); err != nil {
		return err
	}
	c, err := s.links.Convert(r.Context(), p, &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"conversion": conversionJSON{ID: c.ID, ClickID: c.ClickID, LinkID: c.LinkID, Name: c.Name,
		AmountCents: c.AmountCents, Currency: optional(c.Currency), Created: stamp(c.Created)}})
	return nil
}

// handleFollow is the public short link: 302 to the destination with the
// click's id in svc_click; 404 when the link is unknown, inactive or
// archived.
func (s *Server) handleFollow(w http.ResponseWriter, r *http.Request) error {
	to, err := s.links.Follow(r.Context(), r.PathValue("code"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

type webhookJSON struct {
	ID       string   `json:"id"`
	URL      string   `json:"url"`
	Events   []string `json:"events"`
	Active   bool     `json:"active"`
	Failures int      `json:"failures"`
	Created  string   `json:"created"`
	Secret   string   `json:"secret,omitempty"`
}

func toWebhook(w *webhooks.Webhook) webhookJSON {
	return webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Active: w.Active, Failures: w.Failures, Created: stamp(w.Created)}
}

// webhookRoutes serves a tool's webhook management under base.
func (s *Server) webhookRoutes(m *http.ServeMux, base string, t *webhooks.Tool, ping bool) {
	h := func(fn func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, t *webhooks.Tool) error) http.Handler {
		return s.Tool(t.Name, func(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal) error { return fn(w, r, p, t) })
	}
	m.Handle("POST "+base+"/webhooks", h(s.handleCreateWebhook))
	m.Handle("GET "+base+"/webhooks", h(s.handleWebhooks))
	m.Handle("PATCH "+base+"/webhooks/{id}", h(s.handleUpdateWebhook))
	m.Handle("DELETE "+base+"/webhooks/{id}", h(s.handleDeleteWebhook))
	if ping {
		m.Handle("POST "+base+"/webhooks/{id}/test", h(s.handlePingWebhook))
	}
}

func (s *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, t *webhooks.Tool) error {
	var in webhooks.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	hook, err := s.webhooks.Create(r.Context(), t, p, &in)
	if err != nil {
		return err
	}
	out := toWebhook(hook)
	out.Secret = hook.Secret // shown once, here
	httpjson.Write(w, http.StatusOK, map[string]any{"webhook": out})
	return nil
}

func (s *Server) handleWebhooks(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, t *webhooks.Tool) error {
	hs, err := s.webhooks.List(r.Context(), t, p)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(hs))
	for k, h := range hs {
		out[k] = toWebhook(h)
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"webhooks": out})
	return nil
}

func (s *Server) handleUpdateWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, t *webhooks.Tool) error {
	var in webhooks.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	hook, err := s.webhooks.Update(r.Context(), t, p, r.PathValue("id"), &in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"webhook": toWebhook(hook)})
	return nil
}

func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, t *webhooks.Tool) error {
	if err := s.webhooks.Delete(r.Context(), t, p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"webhook deleted"})
	return nil
}

func (s *Server) handlePingWebhook(w http.ResponseWriter, r *http.Request, p *gatehouse.Principal, t *webhooks.Tool) error {
	if _, err := s.webhooks.Ping(r.Context(), t, p, r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, message{"ping sent"})
	return nil
}
