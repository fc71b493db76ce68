package pages

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/internal/seal"
)

// A secret shown once (a new key's, a new invitation link, new recovery
// codes) crosses the create form's redirect in a cookie scoped to the page
// that shows it: HttpOnly, SameSite=Strict, five minutes at most, deleted by
// the one view that reads it. The value is "id.sealed": the secret sealed
// (AES-256-GCM, handlers.shown) to the page's path and the id, so the
// browser's cookie store never holds the secret readable and a value moved
// to another page or object does not open. The page shows it only for an
// id it lists for the caller.
const cookieShowOnce = "gatehouse_show_once"

// showOnce sets the secret of the object id for the next view of path.
func (h *handlers) showOnce(w http.ResponseWriter, path, id, secret string) {
	sealed := h.shown.Seal([]byte(secret), shownContext(path, id))
	http.SetCookie(w, &http.Cookie{Name: h.hostCookie(cookieShowOnce), Value: id + "." + base64.RawURLEncoding.EncodeToString(sealed),
		Path: h.showOncePath(path), MaxAge: 300, HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteStrictMode})
}

// showOncePath is the show-once cookie's path: the page's own on plain
// http, / under https, where the __Host- prefix requires it (the value
// stays sealed to the page's path, so another page cannot open it).
func (h *handlers) showOncePath(path string) string {
	if h.secure {
		return "/"
	}
	return path
}

// takeShown reads and deletes the secret set for path: its object id and
// the secret ("" when none, or when the value does not open).
func (h *handlers) takeShown(w http.ResponseWriter, r *http.Request, path string) (id, secret string) {
	ck, err := r.Cookie(h.hostCookie(cookieShowOnce))
	if err != nil {
		return "", ""
	}
	http.SetCookie(w, &http.Cookie{Name: h.hostCookie(cookieShowOnce), Path: h.showOncePath(path), MaxAge: -1, HttpOnly: true, Secure: h.secure,
		SameSite: http.SameSiteStrictMode})
	id, enc, _ := strings.Cut(ck.Value, ".")
	sealed, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", ""
	}
	plain, err := h.shown.Open(sealed, shownContext(path, id))
	if err != nil {
		return "", ""
	}
	return id, string(plain)
}

// shownContext binds a sealed secret to the page and the object.
func shownContext(path, id string) []byte { return []byte(path + "\x00" + id) }

// processBox is a show-once box under a key of this process alone.
func processBox() *seal.Box {
	master := make([]byte, seal.MinMasterLen)
	rand.Read(master)
	b, err := seal.New(master, "show-once")
	if err != nil {
		panic("pages: show-once key: " + err.Error())
	}
	return b
}
