package scim

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/gatehouse/gatehouse"
)

// The scimType codes (RFC 7644 section 3.12) this module gives its errors
// (gatehouse.Error.Code): the one writer below maps them, never a message.
const (
	CodeInvalidFilter = "invalidFilter"
	CodeInvalidSyntax = "invalidSyntax"
	CodeInvalidPath   = "invalidPath"
	CodeInvalidValue  = "invalidValue"
	CodeNoTarget      = "noTarget"
	CodeUniqueness    = "uniqueness"
	CodeMutability    = "mutability"
	CodeTooMany       = "tooMany"
)

// The SCIM schema URNs.
const (
	SchemaUser       = "urn:ietf:params:scim:schemas:core:2.0:User"
	SchemaGroup      = "urn:ietf:params:scim:schemas:core:2.0:Group"
	SchemaEnterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	SchemaError      = "urn:ietf:params:scim:api:messages:2.0:Error"
	SchemaList       = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	SchemaPatch      = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	SchemaSPC        = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	SchemaRT         = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	SchemaSchema     = "urn:ietf:params:scim:schemas:core:2.0:Schema"
)

// ContentType is the media type of every SCIM answer.
const ContentType = "application/scim+json"

// errorBody is a SCIM error (RFC 7644 section 3.12): status is a string.
type errorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail"`
}

// writeError answers err in SCIM's shape, its status from the kernel's
// table (statusOf); an internal error is logged and answered 500 with
// nothing of its cause.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, statusOf func(gatehouse.Kind) int, err error) {
	var e *gatehouse.Error
	var tooBig *http.MaxBytesError
	status, body := http.StatusInternalServerError, errorBody{Detail: "internal server error"}
	switch {
	case errors.As(err, &tooBig):
		status, body = http.StatusRequestEntityTooLarge, errorBody{Detail: "request body too large"}
	case errors.As(err, &e) && e.Kind != gatehouse.KindInternal:
		status, body = statusOf(e.Kind), errorBody{ScimType: e.Code, Detail: e.Message}
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="scim"`)
		}
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
	default:
		log.LogAttrs(r.Context(), slog.LevelError, "scim internal error", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.String("err", err.Error()))
	}
	body.Schemas, body.Status = []string{SchemaError}, strconv.Itoa(status)
	write(w, status, body)
}

// write answers v as SCIM JSON with status.
func write(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ContentType+"; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// invalid is a 400 SCIM error of scimType code.
func invalid(code, format string, args ...any) error {
	return gatehouse.Invalid(format, args...).WithCode(code)
}
