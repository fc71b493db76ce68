package api

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

func TestDocumentBundles(t *testing.T) {
	var doc struct {
		Paths      map[string]any            `json:"paths"`
		Components map[string]map[string]any `json:"components"`
	}
	if err := json.Unmarshal(Document(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/health", "/v1/auth/login", "/v1/orgs/{id}", "/oauth/token", "/tasks/v1/issues", "/.well-known/jwks.json"} {
		if doc.Paths[p] == nil {
			t.Errorf("bundle lacks %s", p)
		}
	}
	if doc.Components["schemas"]["Error"] == nil {
		t.Errorf("bundle lacks the shared Error schema")
	}
}

func TestBundleRefusesTwoOwners(t *testing.T) {
	base := `{"openapi":"3.1.0","info":{},"paths":{},"components":{"schemas":{"Error":{}}}}`
	for name, part := range map[string]string{
		"path":      `{"paths":{"/a":{}}}`,
		"component": `{"paths":{},"components":{"schemas":{"Error":{}}}}`,
		"field":     `{"paths":{},"component":{}}`,
	} {
		fsys := fstest.MapFS{
			"openapi/base.json": {Data: []byte(base)},
			"openapi/a.json":    {Data: []byte(`{"paths":{"/a":{}}}`)},
			"openapi/b.json":    {Data: []byte(part)},
		}
		_, err := Bundle(fsys)
		if err == nil || !strings.Contains(err.Error(), "b.json") {
			t.Errorf("%s named twice: err = %v, want one naming b.json", name, err)
		}
	}
}
