package pages

import (
	"net/http"

	"github.com/gatehouse/gatehouse"
)

// form guards a page's form POST: cross-origin browser requests are
// refused (http.CrossOriginProtection: Sec-Fetch-Site, then Origin) with
// the error page, and so are fields that are not clean text or too long to
// be any of the pages' values. The pages are the only form users.
func (h *handlers) form(next http.HandlerFunc) http.Handler {
	return h.csrf.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || !gatehouse.CleanValues(r.Form, maxFormValue) {
			h.render(w, http.StatusBadRequest, "error", &page{Title: "Request refused",
				Message: "This form could not be read. Go back to the page and try again."})
			return
		}
		next(w, r)
	}))
}

// maxFormValue bounds a page's form value: tokens, codes, emails,
// passwords and return paths are all far shorter.
const maxFormValue = 4096
