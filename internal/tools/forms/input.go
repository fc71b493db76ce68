package forms

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse"
	"github.com/gatehouse/gatehouse/internal/httpjson"
)

// submission reads the fields of a public submission: urlencoded or
// multipart (files ignored) as HTML forms send, text/plain (an HTML form's
// enctype="text/plain": one name=value per line), or a JSON object.
func submission(r *http.Request) (map[string]any, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case ct == "application/json" || ct == "text/json" || strings.HasSuffix(ct, "+json"):
		return jsonSubmission(r)
	case ct == "multipart/form-data":
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			return nil, formError(err)
		}
		return formFields(r.MultipartForm.Value), nil
	case ct == "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, formError(err)
		}
		return formFields(r.PostForm), nil
	case ct == "text/plain":
		body, err := httpjson.Body(r)
		if err != nil {
			return nil, err
		}
		fields := map[string][]string{}
		for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k != "" {
				fields[k] = append(fields[k], v)
			}
		}
		return formFields(fields), nil
	}
	return nil, gatehouse.Invalid("Content-Type must be application/x-www-form-urlencoded, multipart/form-data, text/plain or application/json")
}

// jsonSubmission reads a submission sent as one JSON object; numbers are
// kept as sent.
func jsonSubmission(r *http.Request) (map[string]any, error) {
	body, err := httpjson.JSONBody(r)
	if err != nil {
		return nil, err
	}
	var data map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil || data == nil || dec.More() {
		return nil, gatehouse.Invalid("request body must be a JSON object")
	}
	return data, nil
}

// formError is the answer to form data that did not parse: a body over
// the limit is returned as is (413), any other failure is invalid.
func formError(err error) error {
	if httpjson.TooBig(err) {
		return err
	}
	return gatehouse.Invalid("the form data could not be read")
}

// formFields turns form values into submission fields: one value as a
// string, several as a list; NUL characters are dropped.
func formFields(values map[string][]string) map[string]any {
	data := make(map[string]any, len(values))
	for k, vs := range values {
		k = strings.ReplaceAll(k, "\x00", "")
		for i := range vs {
			vs[i] = strings.ReplaceAll(vs[i], "\x00", "")
		}
		if len(vs) == 1 {
			data[k] = vs[0]
		} else {
			data[k] = vs
		}
	}
	return data
}
