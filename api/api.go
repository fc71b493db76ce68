// Package api holds the OpenAPI 3.1 document of the whole Gatehouse API
// (accounts, the OAuth endpoints' JSON parts and every tool API). It is the
// contract: every endpoint and every answer it can give is listed, and the
// end-to-end tests validate each response they receive against it.
//
// The document is kept in parts, one per module (openapi/identity.json,
// openapi/workspace.json, …), beside base.json, which holds the header
// (info, servers, tags) and the components more than one module uses. A
// part holds "paths" and the "components" only its paths use. Document
// bundles the parts, embedded in the binary, into the one document served
// at GET /openapi.json; a path or component named in two parts is an error.
package api

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"sync"
)

//go:embed openapi/*.json
var parts embed.FS

var (
	bundleOnce sync.Once
	bundled    []byte
)

// Document returns the bundled document (JSON), served at GET
// /openapi.json. The bytes are shared: do not modify them. It panics when
// the parts do not bundle, which every test run would show first.
func Document() []byte {
	bundleOnce.Do(func() {
		var err error
		if bundled, err = Bundle(parts); err != nil {
			panic("api: " + err.Error())
		}
	})
	return bundled
}

// document is the shape of base.json and of the bundle: the header fields
// kept as they are, the paths and components merged.
type document struct {
	OpenAPI    string                                `json:"openapi"`
	Info       json.RawMessage                       `json:"info"`
	Servers    json.RawMessage                       `json:"servers,omitempty"`
	Tags       json.RawMessage                       `json:"tags,omitempty"`
	Security   json.RawMessage                       `json:"security,omitempty"`
	Paths      map[string]json.RawMessage            `json:"paths"`
	Components map[string]map[string]json.RawMessage `json:"components,omitempty"`
}

// Bundle merges openapi/base.json and every other openapi/*.json of fsys
// into one document.
func Bundle(fsys fs.FS) ([]byte, error) {
	names, err := fs.Glob(fsys, "openapi/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var doc document
	if err := decode(fsys, "openapi/base.json", &doc); err != nil {
		return nil, err
	}
	if doc.Paths == nil {
		doc.Paths = map[string]json.RawMessage{}
	}
	if doc.Components == nil {
		doc.Components = map[string]map[string]json.RawMessage{}
	}
	owner := map[string]string{} // "paths /v1/orgs" → the part that holds it
	for p := range doc.Paths {
		owner["path "+p] = "base.json"
	}
	for kind, items := range doc.Components {
		for name := range items {
			owner[kind+" "+name] = "base.json"
		}
	}
	for _, name := range names {
		if name == "openapi/base.json" {
			continue
		}
		var part struct {
			Paths      map[string]json.RawMessage            `json:"paths"`
			Components map[string]map[string]json.RawMessage `json:"components"`
		}
		if err := decode(fsys, name, &part); err != nil {
			return nil, err
		}
		for p, item := range part.Paths {
			if prev, ok := owner["path "+p]; ok {
				return nil, fmt.Errorf("%s: path %s is already in %s", name, p, prev)
			}
			owner["path "+p] = name
			doc.Paths[p] = item
		}
		for kind, items := range part.Components {
			if doc.Components[kind] == nil {
				doc.Components[kind] = map[string]json.RawMessage{}
			}
			for n, v := range items {
				if prev, ok := owner[kind+" "+n]; ok {
					return nil, fmt.Errorf("%s: %s %s is already in %s", name, kind, n, prev)
				}
				owner[kind+" "+n] = name
				doc.Components[kind][n] = v
			}
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// decode reads one part; a field it does not know is an error, so a
// misspelt "components" does not vanish from the document.
func decode(fsys fs.FS, name string, v any) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
