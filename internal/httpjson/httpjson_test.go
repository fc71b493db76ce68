package httpjson

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHasNUL(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{`{"a":"\u0000"}`, true},
		{`"\u0000"`, true},
		{`{"a":"x\\\u0000"}`, true}, // an escaped backslash, then a NUL
		{`{"a":"\\u0000"}`, false},  // the text \u0000
		{`{"a":"\u0001"}`, false},
		{`{}`, false},
	} {
		if got := HasNUL([]byte(tc.doc)); got != tc.want {
			t.Errorf("HasNUL(%s) = %v; want %v", tc.doc, got, tc.want)
		}
	}
}

func TestReadBody(t *testing.T) {
	r := httptest.NewRequest("POST", "/", strings.NewReader("0123456789"))
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 4)
	if _, err := ReadBody(r); !TooBig(err) {
		t.Errorf("over the limit: err %v; want a *http.MaxBytesError", err)
	}
	r = httptest.NewRequest("POST", "/", errReader{})
	if _, err := ReadBody(r); !errors.Is(err, ErrUnreadable) || TooBig(err) {
		t.Errorf("failing body: err %v; want ErrUnreadable", err)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader(`{"a":1}`))
	if body, err := ReadBody(r); err != nil || string(body) != `{"a":1}` {
		t.Errorf("ReadBody = %q, %v; want the body", body, err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestEach(t *testing.T) {
	got := Each([]int{1, 2, 3}, func(i int) string { return strings.Repeat("x", i) })
	if len(got) != 3 || got[0] != "x" || got[2] != "xxx" {
		t.Errorf("Each = %q; want [x xx xxx]", got)
	}
	if got := Each([]int(nil), func(i int) int { return i }); got == nil || len(got) != 0 {
		t.Errorf("Each(nil) = %#v; want an empty, non-nil slice (JSON [])", got)
	}
}
