package webhooks

import "github.com/gatehouse/gatehouse/internal/httpjson"

// webhookJSON is a Webhook as the API shows it; Secret only in the answer
// to its creation.
type webhookJSON struct {
	ID       string   `json:"id"`
	URL      string   `json:"url"`
	Events   []string `json:"events"`
	Active   bool     `json:"active"`
	Failures int      `json:"failures"`
	Created  string   `json:"created"`
	Secret   string   `json:"secret,omitempty"`
}

func toWebhook(w *Webhook) webhookJSON {
	return webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Active: w.Active, Failures: w.Failures,
		Created: httpjson.Stamp(w.Created)}
}
