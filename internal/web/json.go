package web

import (
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// MaxBody is the largest request body accepted; larger answers 413.
const MaxBody = 1 << 20

// The body reading and JSON helpers are httpjson's, shared with the tool
// modules; these names keep the kernel's handlers short.
var (
	decode   = httpjson.Decode
	stamp    = httpjson.Stamp
	stampPtr = httpjson.StampPtr
	optional = httpjson.Optional
)

type message struct {
	Message string `json:"message"`
}
