package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Audit reads org's audit log through the API as token with query (e.g.
// "limit=500"; "" for none) and returns its entries.
func (e *Env) Audit(t testing.TB, token, org, query string) []map[string]any {
	t.Helper()
	path := "/v1/orgs/" + org + "/audit"
	if query != "" {
		path += "?" + query
	}
	return e.Call(t, "GET", path, token, nil).Want(t, 200).List(t, "entries")
}

// AuditIDs is the set of entry ids of org's log (its newest 500).
func (e *Env) AuditIDs(t testing.TB, token, org string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, en := range e.Audit(t, token, org, "limit=500") {
		id, _ := en["id"].(string)
		seen[id] = true
	}
	return seen
}

// NewEntries returns org's entries not in seen and adds them to it.
func (e *Env) NewEntries(t testing.TB, token, org string, seen map[string]bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, en := range e.Audit(t, token, org, "limit=500") {
		id, _ := en["id"].(string)
		if !seen[id] {
			seen[id] = true
			out = append(out, en)
		}
	}
	return out
}

// CheckEntry checks an audit entry's shape (CONTRACT §3): every field a
// string, meta a JSON-encoded object, at an RFC 3339 time.
func CheckEntry(t testing.TB, en map[string]any) {
	t.Helper()
	CheckKeys(t, fmt.Sprintf("audit entry %v", en["action"]), en, "id", "org_id", "tool", "action", "actor_id", "target_type", "target_id", "meta", "at")
	for k, v := range en {
		if _, ok := v.(string); !ok {
			t.Errorf("audit entry %v: %s = %#v; want a string", en["action"], k, v)
		}
	}
	meta, _ := en["meta"].(string)
	var m map[string]any
	if err := json.Unmarshal([]byte(meta), &m); err != nil || m == nil {
		t.Errorf("audit entry %v: meta = %q; want a JSON-encoded object", en["action"], meta)
	}
	if at, _ := en["at"].(string); at != "" {
		if _, err := time.Parse(time.RFC3339, at); err != nil {
			t.Errorf("audit entry %v: at = %q is not RFC 3339", en["action"], at)
		}
	}
}

// InsertAudit inserts n audit rows for org straight in the database, the
// i-th (0-based) at base minus i+1 milliseconds, so the newest comes first.
func (e *Env) InsertAudit(t testing.TB, org, tool, action string, n int, base time.Time) {
	t.Helper()
	for start := 0; start < n; start += 100 {
		end := min(start+100, n)
		var sb strings.Builder
		sb.WriteString(`INSERT INTO audit_log (id, org_id, tool, action, actor_id, target_type, target_id, meta, at) VALUES `)
		var args []any
		for i := start; i < end; i++ {
			if i > start {
				sb.WriteString(", ")
			}
			p := len(args)
			fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9)
			args = append(args, uuid.NewString(),
				org, tool, action, "", "issue", fmt.Sprint(i), `{"n":`+fmt.Sprint(i)+`}`,
				base.Add(-time.Duration(i+1)*time.Millisecond).UnixMicro())
		}
		e.Exec(t, sb.String(), args...)
	}
}

// StoredAudit returns org's identity entries with action ("" for any),
// newest first, read from the store.
func (e *Env) StoredAudit(t testing.TB, org, action string) []map[string]string {
	t.Helper()
	es, err := e.Store.AuditLog(context.Background(), org, "identity", action, 500)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]string, len(es))
	for i, en := range es {
		out[i] = map[string]string{"actor_id": en.ActorID, "target_type": en.TargetType, "target_id": en.TargetID, "meta": en.Meta, "action": en.Action}
	}
	return out
}
