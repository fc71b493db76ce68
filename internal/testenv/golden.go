package testenv

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that uses testenv, so
// that `go test ./... -update` rewrites all golden files at once.
var update = flag.Bool("update", false, "rewrite golden files")

// Golden compares got with testdata/name of the package under test, or
// rewrites that file under -update.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

// Updating reports whether the test binary runs with -update: golden files
// and screenshots are rewritten.
func Updating() bool { return *update }
