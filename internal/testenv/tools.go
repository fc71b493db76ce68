package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"
)

// Follow GETs the Links short link code, as a browser would on the
// short-link URL's host (Env.ShortLinkURL), without following the
// redirect.
func (e *Env) Follow(t testing.TB, code string) *http.Response {
	t.Helper()
	u, err := url.Parse(e.ShortLinkURL)
	if err != nil {
		t.Fatal(err)
	}
	return e.FollowOn(t, u.Host, code)
}

// FollowOn is Follow asking for host (the Host header) whatever the
// short-link URL; it reads the body.
func (e *Env) FollowOn(t testing.TB, host, code string) *http.Response {
	t.Helper()
	c := &http.Client{Transport: e.Client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest("GET", e.URL+"/l/"+code, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res
}

// TestPDF is a two-page PDF skeleton: enough for Sign's page count.
var TestPDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj\n" +
	"3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n4 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// CreateDocument posts a Sign document as multipart: pdf as the file
// (none when nil) and doc, marshalled, as the document JSON.
func (e *Env) CreateDocument(t testing.TB, token string, pdf []byte, doc any) *Resp {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if pdf != nil {
		fw, _ := mw.CreateFormFile("file", "contract.pdf")
		fw.Write(pdf)
	}
	meta, _ := json.Marshal(doc)
	mw.WriteField("document", string(meta))
	mw.Close()
	req, _ := http.NewRequest("POST", e.URL+"/sign/v1/documents", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := e.Send(req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
