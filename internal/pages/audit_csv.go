package pages

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/internal/workspace"
)

// handleAuditCSV handles "GET /workspaces/{id}/audit.csv": the audit
// page's view (the same filters and limit) as a CSV download. A refused
// filter shows the page with its error.
func (h *handlers) handleAuditCSV(w http.ResponseWriter, r *http.Request, c *caller, o *workspace.OrgListing) error {
	p, err := h.auditPage(r, c, o)
	if err != nil {
		return err
	}
	d := p.Data.(*auditData)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write([]string{"time", "tool", "action", "what", "actor", "target", "details"})
	for _, row := range d.Rows {
		details := make([]string, 0, len(row.Meta))
		for _, m := range row.Meta {
			details = append(details, m.Key+": "+m.Value)
		}
		_ = cw.Write(csvCells(row.At.UTC().Format(time.RFC3339), row.Tool, row.Action, row.Label, row.Actor, row.Target,
			strings.Join(details, "; ")))
	}
	cw.Flush()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="audit-`+d.Org.ID+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
	return nil
}

// csvCells are cells made safe to open in a spreadsheet: one that starts
// with = + - @ (or a tab or carriage return, which some read past) gets a
// leading ' so it is read as text, never as a formula (OWASP, CSV
// injection).
func csvCells(cells ...string) []string {
	for i, c := range cells {
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			cells[i] = "'" + c
		}
	}
	return cells
}
