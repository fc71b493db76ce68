package outbound

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLimitBodies: a body of max bytes reads whole; one byte more fails.
func TestLimitBodies(t *testing.T) {
	const max = 1000
	var size int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", size))
	}))
	defer srv.Close()
	c := &http.Client{Transport: LimitBodies(http.DefaultTransport, max)}
	for _, tc := range []struct {
		size int
		ok   bool
	}{{0, true}, {max, true}, {max + 1, false}, {10 * max, false}} {
		size = tc.size
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if (err == nil) != tc.ok || (tc.ok && len(b) != tc.size) {
			t.Errorf("body of %d bytes: read %d, err %v; want ok %v", tc.size, len(b), err, tc.ok)
		}
	}
}
