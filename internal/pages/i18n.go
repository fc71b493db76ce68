package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse/internal/i18n"

	"golang.org/x/text/language"
)

// Two languages (issue 30 item 10): the templates' words go through {{t}}
// (render.go's langFuncs), and the sentences a handler puts on a page
// (title, notice, error, field messages) are the catalogue's English keys,
// translated here as the page renders. A sentence with a name in it is
// formatted in the request's language where it is made (tr).

// langMux gives every page request its language: the browser's
// Accept-Language, which browser replaces with the signed-in person's
// preference.
type langMux struct{ Mux }

func (m langMux) Handle(pattern string, h http.Handler) { m.Mux.Handle(pattern, withLang(h)) }

func (m langMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Mux.Handle(pattern, withLang(http.HandlerFunc(h)))
}

// withLang is h with the request's language in its context.
func withLang(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(i18n.WithRequest(r.Context(), r.Header.Get("Accept-Language"))))
	})
}

// translate puts the page's Go-set sentences in lang. A sentence the
// catalogue lacks (one already formatted by tr) stays as it is.
func (p *page) translate(lang language.Tag) {
	if lang == i18n.English {
		return
	}
	for _, s := range []*string{&p.Title, &p.Notice, &p.Intro, &p.Button} {
		*s = i18n.T(lang, *s)
	}
	// Error, Message and Fields may hold a domain error's message.
	p.Error, p.Message = errorText(lang, p.Error), errorText(lang, p.Message)
	if len(p.Fields) > 0 {
		fields := make(map[string]string, len(p.Fields))
		for k, v := range p.Fields {
			fields[k] = errorText(lang, v)
		}
		p.Fields = fields
	}
	if p.Resume != nil {
		rs := *p.Resume
		rs.Text, rs.Button = errorText(lang, rs.Text), i18n.T(lang, rs.Button)
		rs.Shown = translateHidden(lang, rs.Shown)
		rs.Secrets = translateHidden(lang, rs.Secrets)
		p.Resume = &rs
	}
}

// translateHidden is hs with their Values (labels) in lang.
func translateHidden(lang language.Tag, hs []hidden) []hidden {
	out := make([]hidden, len(hs))
	for i, h := range hs {
		out[i] = hidden{Name: h.Name, Value: i18n.T(lang, h.Value)}
	}
	return out
}
