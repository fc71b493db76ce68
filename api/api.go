// Package api holds the OpenAPI 3.1 document of the whole Gatehouse API
// (accounts, the OAuth endpoints' JSON parts and every tool API). It is the
// contract: every endpoint and every answer it can give is listed, and the
// end-to-end tests validate each response they receive against it.
package api

import _ "embed"

//go:embed openapi.json
var openAPI []byte

// Document returns the document (JSON), served at GET /openapi.json. The
// bytes are shared: do not modify them.
func Document() []byte { return openAPI }
