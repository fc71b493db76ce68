package pages

import (
	"net/http"
	"strings"
)

// A secret shown once (a new key's, a new invitation link) crosses the
// create form's redirect in a cookie scoped to the page that shows it:
// HttpOnly, SameSite=Strict, five minutes at most, deleted by the one view
// that reads it. The value is "id.secret"; the page shows it only for an
// id it lists for the caller.
const cookieShowOnce = "gatehouse_show_once"

// showOnce sets the secret of the object id for the next view of path.
func (h *handlers) showOnce(w http.ResponseWriter, path, id, secret string) {
	http.SetCookie(w, &http.Cookie{Name: cookieShowOnce, Value: id + "." + secret, Path: path, MaxAge: 300,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
}

// takeShown reads and deletes the secret set for path: its object id and
// the secret ("" when none).
func (h *handlers) takeShown(w http.ResponseWriter, r *http.Request, path string) (id, secret string) {
	ck, err := r.Cookie(cookieShowOnce)
	if err != nil {
		return "", ""
	}
	http.SetCookie(w, &http.Cookie{Name: cookieShowOnce, Path: path, MaxAge: -1, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
	id, secret, _ = strings.Cut(ck.Value, ".")
	return id, secret
}
