package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packaging are the files that run Gatehouse elsewhere (README
// "Deploying").
var packaging = []string{"../../Dockerfile", "../../compose.yaml", "../../deploy/gatehouse.service"}

var settingName = regexp.MustCompile(`GATEHOUSE_[A-Z0-9_]*[A-Z0-9]`)

// TestPackagingNamesRealSettings: every GATEHOUSE_* variable the
// Dockerfile, compose.yaml and the systemd unit name is a setting the
// binary reads (or the _FILE form of a secret one) and a row of the
// README's settings table; the commands they run exist; the build image's
// Go is go.mod's.
func TestPackagingNamesRealSettings(t *testing.T) {
	var c Config
	known := map[string]bool{}
	for _, s := range c.settings() {
		known[s.env] = true
	}
	for _, s := range secretSettings {
		known[s+"_FILE"] = true
	}
	readme := readFile(t, "../../README.md")
	_, table, _ := strings.Cut(readme, "\n## Configuration\n")
	_, table, _ = strings.Cut(table, "\n| variable")
	table, _, _ = strings.Cut(table, "\n\n")
	for _, f := range packaging {
		text := readFile(t, f)
		for _, name := range settingName.FindAllString(text, -1) {
			if !known[name] {
				t.Errorf("%s names %s, which gatehouse does not read", f, name)
			}
			if !strings.Contains(table, "`"+name+"`") {
				t.Errorf("%s names %s, which the README's settings table does not list", f, name)
			}
		}
	}
	for f, re := range map[string]string{"../../Dockerfile": `CMD \["(\w+)"\]`, "../../deploy/gatehouse.service": `ExecStart=\S+ (\w+)`} {
		m := regexp.MustCompile(re).FindStringSubmatch(readFile(t, f))
		if m == nil || !strings.Contains(usage, "\n  "+m[1]+" ") {
			t.Errorf("%s runs the command %v, which the usage does not list", f, m)
		}
	}
	if !strings.Contains(readFile(t, "../../Dockerfile"), `HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD ["/gatehouse", "health"]`) {
		t.Error("Dockerfile: no HEALTHCHECK running gatehouse health")
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(readFile(t, "../../go.mod"))
	if goVersion == nil || !strings.Contains(readFile(t, "../../Dockerfile"), "FROM golang:"+goVersion[1]+"-") {
		t.Errorf("Dockerfile does not build with go.mod's Go %v", goVersion)
	}
}

// TestReadmeFirstScreen: the README's first screen (before its first
// rule) shows exactly two commands.
func TestReadmeFirstScreen(t *testing.T) {
	first, _, _ := strings.Cut(readFile(t, "../../README.md"), "\n---\n")
	var commands []string
	for line := range strings.Lines(first) {
		if strings.HasPrefix(line, "    ") {
			commands = append(commands, strings.TrimSpace(line))
		}
	}
	if !slices.Equal(commands, []string{"go run ./cmd/gatehouse serve", "bash scripts/test.sh"}) {
		t.Errorf("README's first screen shows %q; want the two commands", commands)
	}
}

// TestHealthCommand: gatehouse health exits 0 on a 200, 1 on anything
// else or no answer, and reads an unspecified GATEHOUSE_ADDR host as
// loopback.
func TestHealthCommand(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	env := func(addr string) func(string) string {
		return func(k string) string {
			if k == "GATEHOUSE_ADDR" {
				return addr
			}
			return ""
		}
	}
	var out, errOut bytes.Buffer
	ctx := context.Background()
	if code := healthCommand(ctx, nil, env("0.0.0.0:"+port), &out, &errOut); code != 0 {
		t.Errorf("health on 0.0.0.0:%s = %d (%s); want 0", port, code, errOut.String())
	}
	if code := healthCommand(ctx, []string{srv.URL + "/health"}, env(""), &out, &errOut); code != 0 {
		t.Errorf("health %s = %d; want 0", srv.URL, code)
	}
	status = http.StatusServiceUnavailable
	if code := healthCommand(ctx, nil, env("127.0.0.1:"+port), &out, &errOut); code != 1 {
		t.Errorf("health of a 503 = %d; want 1", code)
	}
	srv.Close()
	if code := healthCommand(ctx, nil, env("127.0.0.1:"+port), &out, &errOut); code != 1 {
		t.Errorf("health of nothing listening = %d; want 1", code)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
