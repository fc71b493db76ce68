package testenv

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// DoIn is Do with the request's Accept-Language header set to lang (the
// language of the mail an API request causes to a person with no
// preference).
func (e *Env) DoIn(t testing.TB, lang, method, path, bearer string, body any) *Resp {
	t.Helper()
	j, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, e.URL+path, bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", lang)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	r, err := e.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
