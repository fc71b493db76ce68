package sign

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// decodeCreate reads the multipart body of a document create: the PDF in
// the part "file" (at most MaxFile bytes are read; Create refuses more)
// and its description, a CreateInput in JSON, in the part "document". The
// parts spooled to disk are removed before it returns.
func decodeCreate(r *http.Request) ([]byte, *CreateInput, error) {
	if err := r.ParseMultipartForm(4 << 20); err != nil {
		if httpjson.TooBig(err) {
			return nil, nil, err
		}
		return nil, nil, gatehouse.Invalid("the body must be multipart/form-data with a file (PDF) and a document (JSON)")
	}
	defer r.MultipartForm.RemoveAll()
	var in CreateInput
	meta := r.FormValue("document")
	if httpjson.HasNUL([]byte(meta)) {
		return nil, nil, httpjson.NULError()
	}
	if err := json.Unmarshal([]byte(meta), &in); err != nil {
		return nil, nil, gatehouse.Invalid("document must be a JSON object: name, message, recipients, fields")
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		return nil, nil, gatehouse.Invalid("file is required (a PDF)")
	}
	defer f.Close()
	pdf, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, nil, gatehouse.Invalid("file could not be read")
	}
	return pdf, &in, nil
}
