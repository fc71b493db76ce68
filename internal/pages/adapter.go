package pages

import (
	"errors"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/workspace"
)

// The console's adapter, as the kernel's Authed is the API's: a console
// page action takes the signed-in caller and returns its error, and the
// adapter answers that error in one place. A page action is then: parse
// its form, call the domain, render its page or redirect with a notice.

// consoleAction is a console page action of a signed-in caller.
type consoleAction func(w http.ResponseWriter, r *http.Request, c *caller) error

// workspaceAction is a console page action in the workspace of the path
// ({id}), of which the caller is a member.
type workspaceAction func(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error

// console serves a console page action: an anonymous GET goes to sign in
// and comes back, an anonymous POST goes to sign in, and the action's
// error is answered by h.answer.
func (h *handlers) console(f consoleAction) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(w, r)
		if c == nil {
			return
		}
		if err := f(w, r, c); err != nil {
			h.answer(w, r, err)
		}
	}
}

// inWorkspace is console for a page of the workspace in the path: a
// workspace the caller is not in is not found (404) before f runs.
func (h *handlers) inWorkspace(f workspaceAction) http.HandlerFunc {
	return h.console(func(w http.ResponseWriter, r *http.Request, c *caller) error {
		o, err := h.orgOf(r, c, r.PathValue("id"))
		if err != nil {
			return err
		}
		return f(w, r, c, o)
	})
}

// errPageNotFound is the answer (404) of a page the service does not
// serve, such as SSO's when it runs without SSO.
var errPageNotFound = gatehouse.Errorf(gatehouse.KindNotFound, "page not found")

// when is f when on (a service the pages of f need is configured), else
// an action answering 404, once the caller is known as for every page.
func when(on bool, f consoleAction) consoleAction {
	if on {
		return f
	}
	return func(http.ResponseWriter, *http.Request, *caller) error { return errPageNotFound }
}

// answer renders the error of a page action: a form refused by the
// service on its page again (refuse), an action that needs a recent
// sign-in as signing in again in place, a flow's refusal as a redirect or
// its error page (refuseFlow), anything else as the error page with the
// status of its kind (pageError).
func (h *handlers) answer(w http.ResponseWriter, r *http.Request, err error) {
	if rf, ok := errors.AsType[*refusal](err); ok {
		h.refuse(w, r, rf.name, rf.page, rf.err, rf.values, rf.fields...)
		return
	}
	if fr, ok := errors.AsType[*flowRefusal](err); ok {
		h.refuseFlow(w, r, fr)
		return
	}
	h.pageError(w, r, err)
}

// flowRefusal is a request of a sign-in or OAuth flow (authorization,
// device, logout, the second step) refused. With to, the browser is sent
// there: back to the client when it may hear its errors at its redirect
// URI (RFC 6749 §4.1.2.1: the oauth server checked the URI and built the
// address), or to our sign-in page. Without, it is our error page (400)
// under Title, since the client or its redirect URI cannot be trusted
// (RFC 9700 §4.11.2). Title and Message are named as the page's fields,
// so the catalogue's test reads their sentences.
type flowRefusal struct {
	to             string
	Title, Message string
	// signedIn shows the signed-in browser's user on the error page (its
	// sign-out), as the logout pages do.
	signedIn bool
}

func (e *flowRefusal) Error() string {
	if e.to != "" {
		return "refused, sent to " + e.to
	}
	return e.Message
}

// sentBack is the refusal whose answer is the redirect (303) to to.
func sentBack(to string) error { return &flowRefusal{to: to} }

// refuseFlow answers fr: its redirect, or its error page.
func (h *handlers) refuseFlow(w http.ResponseWriter, r *http.Request, fr *flowRefusal) {
	if fr.to != "" {
		http.Redirect(w, r, fr.to, http.StatusSeeOther)
		return
	}
	p := &page{Title: fr.Title, Message: fr.Message}
	if fr.signedIn {
		if b, err := h.browser(r); err == nil && b != nil {
			p.User = b.User
		}
	}
	h.render(w, r, http.StatusBadRequest, "error", p)
}

// refusal is a form the service refused, to be shown again on its page:
// the message next to one of fields (or above the form) and the typed
// values kept.
type refusal struct {
	name   string // the page's template
	page   *page
	err    error
	values map[string]string
	fields []string
}

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// refused is err shown on page p (template name) around its form; an error
// that is not a refusal (an internal one) is the error page, and one that
// needs a recent sign-in offers it, as refuse decides.
func refused(name string, p *page, err error, values map[string]string, fields ...string) error {
	return &refusal{name: name, page: p, err: err, values: values, fields: fields}
}

// consolePage builds a console page for the caller.
type consolePage func(r *http.Request, c *caller) (*page, error)

// workspacePage builds a page of workspace o for the caller.
type workspacePage func(r *http.Request, c *caller, o *workspace.OrgListing) (*page, error)

// consoleView serves the GET of a console page that build makes, rendered
// with template name.
func (h *handlers) consoleView(name string, build consolePage) http.HandlerFunc {
	return h.console(func(w http.ResponseWriter, r *http.Request, c *caller) error {
		p, err := build(r, c)
		if err != nil {
			return err
		}
		h.render(w, r, http.StatusOK, name, p)
		return nil
	})
}

// workspaceView is consoleView for a page of the workspace in the path.
func (h *handlers) workspaceView(name string, build workspacePage) http.HandlerFunc {
	return h.inWorkspace(func(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
		p, err := build(r, c, o)
		if err != nil {
			return err
		}
		h.render(w, r, http.StatusOK, name, p)
		return nil
	})
}

// refusedIn is err refused on the page build makes, again, of the
// workspace in the path (template name), around the form the caller sent.
func (h *handlers) refusedIn(r *http.Request, c *caller, name string, build workspacePage, err error, values map[string]string, fields ...string) error {
	p, perr := h.pageIn(asGet(r), c, build)
	if perr != nil {
		return perr
	}
	return refused(name, p, err, values, fields...)
}

// pageIn is the page build makes of the workspace in the path of r.
func (h *handlers) pageIn(r *http.Request, c *caller, build workspacePage) (*page, error) {
	o, err := h.orgOf(r, c, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return build(r, c, o)
}

// pageAction is a page of the sign-in flows (no console caller): it
// returns its error, and the adapter answers it.
type pageAction func(w http.ResponseWriter, r *http.Request) error

// flow serves a page action, answering its error with h.answer.
func (h *handlers) flow(f pageAction) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			h.answer(w, r, err)
		}
	}
}
