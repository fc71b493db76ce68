package web_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestBodyLimit checks the route-declared body bound: a Sign document
// upload may exceed the 1 MiB of every other route, up to its own bound.
func TestBodyLimit(t *testing.T) {
	testenv.Run(t, func(t *testing.T, env *testenv.Env) {
		a := env.Register(t)
		upload := func(size int) int {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, _ := mw.CreateFormFile("file", "big.pdf")
			fw.Write(bytes.Repeat([]byte("x"), size))
			mw.WriteField("document", `{"name":"Big"}`)
			mw.Close()
			req, _ := http.NewRequest("POST", env.URL+"/sign/v1/documents", &buf)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set("Authorization", "Bearer "+a.Access)
			res, err := env.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		// Not a PDF, so 400 once read; what matters is that it was read.
		if got := upload(3 << 20); got != 400 {
			t.Errorf("3 MiB upload: %d; want 400 (read, then refused as not a PDF)", got)
		}
		if got := upload(22 << 20); got != 413 {
			t.Errorf("22 MiB upload: %d; want 413", got)
		}
		env.Do(t, "POST", "/v1/orgs", a.Access, map[string]string{"name": string(bytes.Repeat([]byte("x"), 3<<20))}).Want(t, 413)
	})
}
