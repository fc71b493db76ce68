package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/sso"
)

// form guards a page's form POST: cross-origin browser requests are
// refused (http.CrossOriginProtection: Sec-Fetch-Site, then Origin) with
// the error page, and so are fields that are not clean text or too long to
// be any of the pages' values. The pages are the only form users.
func (h *handlers) form(next http.HandlerFunc) http.Handler { return h.formUpTo(maxFormValue, next) }

// bigForm is form for the forms that carry a document (an identity
// provider's SAML metadata): a value may be as long as one, the body a
// little longer.
func (h *handlers) bigForm(next http.HandlerFunc) http.Handler {
	inner := h.formUpTo(sso.MaxSAMLMetadata, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4*sso.MaxSAMLMetadata)
		inner.ServeHTTP(w, r)
	})
}

// formUpTo is form with values of at most max bytes.
func (h *handlers) formUpTo(max int, next http.HandlerFunc) http.Handler {
	return h.csrf.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || !gatehouse.CleanValues(r.Form, max) {
			h.render(w, r, http.StatusBadRequest, "error", &page{Title: "Request refused",
				Message: "This form could not be read. Go back to the page and try again."})
			return
		}
		next(w, r)
	}))
}

// maxFormValue bounds a page's form value: tokens, codes, emails,
// passwords and return paths are all far shorter.
const maxFormValue = 4096
