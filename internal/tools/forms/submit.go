package forms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/i18n"
	"github.com/gatehouse/gatehouse/internal/mail"
	"github.com/gatehouse/gatehouse/internal/maillimit"

	"golang.org/x/text/language"
)

// MaxAutoresponsesPerHour bounds a workspace's autoresponses, all its
// forms together, over any rolling hour, unless Config.NoMailLimits: the
// submitter's address is whatever was typed into the form, so the
// autoresponder could mail anyone, and a new form must not reset the cap.
const MaxAutoresponsesPerHour = 100

// Submit stores a public submission to form id; data are the submitted
// fields. A non-empty _gotcha marks it spam; _gotcha and _next are not
// stored. It returns where to send the submitter (_next), if anywhere:
// only to an origin the form lists in its redirectOrigins.
func (s *Service) Submit(ctx context.Context, id string, data map[string]any) (string, error) {
	if !gatehouse.IsID(id) {
		return "", errFormNotFound
	}
	f, err := s.store.LiveForm(ctx, "", id)
	if errors.Is(err, gatehouse.ErrNotFound) {
		return "", errFormNotFound
	}
	if err != nil {
		return "", gatehouse.Internal("find form", err)
	}
	if !gatehouse.ToolOn(f.ToolSwitch) {
		return "", gatehouse.Errorf(gatehouse.KindForbidden, "the %s tool is not enabled for this workspace", Tool)
	}
	if data == nil {
		return "", gatehouse.Invalid("a submission must be an object of fields")
	}
	spam := filled(data["_gotcha"])
	next := text(data["_next"])
	delete(data, "_gotcha")
	delete(data, "_next")
	if len(data) > MaxFields {
		return "", gatehouse.Invalid("a submission has at most %d fields", MaxFields)
	}
	if next, err = checkNext(next); err != nil {
		return "", err
	}
	for k, v := range data {
		if sv, ok := v.(string); ok {
			v = strings.ToValidUTF8(sv, "\uFFFD")
			data[k] = v
		}
		if len(k) > 200 || len(text(v)) > MaxFieldValueBytes {
			return "", gatehouse.Invalid("field %q is too long", truncate(k, 40))
		}
		if depth(v) > MaxDepth {
			return "", gatehouse.Invalid("field %q nests deeper than %d levels", truncate(k, 40), MaxDepth)
		}
	}
	sub := &Submission{ID: gatehouse.NewID(), FormID: f.ID, Data: data, Spam: spam, Created: s.clock.Now()}
	submitter, _ := gatehouse.NormalizeEmail(text(data["email"]))
	err = s.store.Tx(ctx, func(tx Store) error {
		if !spam && f.Autoresponder.Enabled && submitter != "" {
			if err := s.reserveAutoresponse(ctx, tx, f, sub); err != nil {
				return err
			}
		}
		if err := tx.AddSubmission(ctx, sub); err != nil {
			return gatehouse.Internal("store submission", err)
		}
		if !spam {
			if err := s.deliver(ctx, tx, f, sub, submitter); err != nil {
				return err
			}
		}
		return s.audit(ctx, tx, nil, f, "submission.created", "submission", sub.ID, map[string]any{"spam": spam})
	})
	if err != nil {
		return "", err
	}
	if !f.nextAllowed(next) {
		return "", nil
	}
	return next, nil
}

// reserveAutoresponse marks sub autoresponded, and records the mail,
// unless f's workspace has already sent MaxAutoresponsesPerHour in the
// last hour (counted in the database under the workspace's lock, so every
// instance shares the limit and concurrent submissions count each
// other's).
func (s *Service) reserveAutoresponse(ctx context.Context, tx Store, f *Form, sub *Submission) error {
	if !s.noMailLimits {
		if err := tx.LockOrg(ctx, f.OrgID); err != nil {
			return gatehouse.Internal("lock workspace", err)
		}
		n, err := tx.CountMail(ctx, maillimit.Filter{Kind: maillimit.FormAutoresponse, OrgID: f.OrgID, Since: sub.Created.Add(-time.Hour)})
		if err != nil {
			return gatehouse.Internal("count autoresponses", err)
		}
		if n >= MaxAutoresponsesPerHour {
			return nil
		}
	}
	if err := tx.RecordMail(ctx, maillimit.FormAutoresponse, f.OrgID, "", sub.Created, 1); err != nil {
		return gatehouse.Internal("record autoresponse", err)
	}
	at := sub.Created
	sub.AutorespondedAt = &at
	return nil
}

// deliver mails a submission to the confirmed addresses of the form's
// email destinations (Reply-To the submitter, when a field named email
// holds a valid address) and, when reserved, the autoresponder to the
// submitter: the mails are queued in tx, the submission's transaction.
func (s *Service) deliver(ctx context.Context, tx Store, f *Form, sub *Submission, submitter string) error {
	var msgs []mail.Message
	dests, err := tx.ListDestinations(ctx, f.ID)
	if err != nil {
		return gatehouse.Internal("list destinations", err)
	}
	for _, d := range dests {
		for _, to := range d.Confirmed {
			lang, err := mailLanguage(ctx, tx, to, f.CreatedBy)
			if err != nil {
				return err
			}
			msgs = append(msgs, mail.Message{To: to, ReplyTo: submitter, Subject: i18n.Tf(lang, "New submission: %s", f.Name), Text: summary(lang, f, sub)})
		}
	}
	if sub.AutorespondedAt != nil {
		msgs = append(msgs, mail.Message{To: submitter, Subject: f.Autoresponder.Subject, Text: f.Autoresponder.Body, Theirs: true})
	}
	for _, m := range msgs {
		if err := tx.QueueMail(ctx, m); err != nil {
			return gatehouse.Internal("queue submission mail", err)
		}
	}
	return nil
}

// summary is the text of a submission mail in lang: one line per field,
// sorted.
func summary(lang language.Tag, f *Form, sub *Submission) string {
	keys := make([]string, 0, len(sub.Data))
	for k := range sub.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(i18n.Tf(lang, "A new submission to %s (%s):\n\n", f.Name, sub.Created.Format(time.RFC3339)))
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, text(sub.Data[k]))
	}
	return b.String()
}

// filled reports whether a honeypot value is non-empty: a non-blank
// string, true, a non-zero number, a non-empty array or object.
func filled(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return strings.TrimSpace(v) != ""
	case bool:
		return v
	case json.Number:
		f, err := v.Float64()
		return err != nil || f != 0
	case []any:
		return len(v) > 0
	case []string:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// depth is how deeply a submitted value nests (a scalar is 0).
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// text renders a submitted value: strings as they are, anything else as JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
