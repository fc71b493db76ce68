package binary

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testenv"
)

// TestImage builds the Dockerfile with podman (scripts/setup-e2e.sh
// installs it) and starts what it built: the image's entrypoint, in the
// image's file system, as the image's user, with the image's environment
// but for the listen address. It checks what the README promises of the
// image (no shell, a non-root user, a data directory that user owns and
// SQLite can write, the HEALTHCHECK command) and that /health answers.
//
// The registry is out of reach here, so the build image is a local
// stand-in of the same name (scripts/podman-go-base.sh) when none was
// pulled, and the module and build caches are lent to the build. Podman's runtime
// cannot start a container on these machines (crun and runc are refused
// setrlimit inside the VM), so the entrypoint runs under chroot(8) instead
// of "podman run"; the test says so when "podman run" fails.
func TestImage(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (scripts/setup-e2e.sh installs it)")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := func(name string, args ...string) string {
		t.Helper()
		c := exec.CommandContext(ctx, name, args...)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return strings.TrimSpace(string(out))
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd("bash", filepath.Join(repo, "scripts/podman-go-base.sh"))
	tag := "localhost/gatehouse-test:" + testenv.RandomHex(4)
	modcache, buildcache := cmd("go", "env", "GOMODCACHE"), cmd("go", "env", "GOCACHE")
	cmd("podman", "build", "--quiet", "--isolation=chroot", "--network=host",
		"-v", modcache+":/root/go/pkg/mod", "-v", buildcache+":/root/.cache/go-build", "-t", tag, repo)
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", tag).Run() })

	var conf []struct {
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
			Cmd        []string
			WorkingDir string
		}
	}
	if err := json.Unmarshal([]byte(cmd("podman", "image", "inspect", tag)), &conf); err != nil || len(conf) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	c := conf[0].Config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/gatehouse"}) || !slices.Equal(c.Cmd, []string{"serve"}) || c.WorkingDir != "/data" {
		t.Errorf("image config: user %q entrypoint %q cmd %q workdir %q; want 65532:65532, [/gatehouse], [serve], /data", c.User, c.Entrypoint, c.Cmd, c.WorkingDir)
	}
	if !slices.Contains(c.Env, "GATEHOUSE_DATABASE_URL=sqlite:/data/gatehouse.db") {
		t.Errorf("image env %q names no SQLite file in /data", c.Env)
	}

	id := cmd("podman", "create", tag)
	t.Cleanup(func() { exec.Command("podman", "rm", "-f", id).Run() })
	root := cmd("podman", "mount", id)
	t.Cleanup(func() { exec.Command("podman", "umount", id).Run() })
	for _, p := range []string{"bin/sh", "usr/bin", "sbin"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("the image has /%s; want no shell and no system directories", p)
		}
	}
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{"data", 0o700}, {"tmp", 0o1777 | os.ModeSticky}} {
		fi, err := os.Stat(filepath.Join(root, d.path))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 65532 || fi.Mode().Perm() != d.mode.Perm() || (d.mode&os.ModeSticky != 0) != (fi.Mode()&os.ModeSticky != 0) {
			t.Errorf("/%s: owner %d mode %v; want 65532 and %v", d.path, st.Uid, fi.Mode(), d.mode)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	env := []string{"GATEHOUSE_ADDR=" + addr}
	for _, kv := range c.Env {
		if !strings.HasPrefix(kv, "GATEHOUSE_ADDR=") {
			env = append(env, kv)
		}
	}
	chroot := func(args ...string) *exec.Cmd {
		x := exec.CommandContext(ctx, "chroot", append([]string{"--userspec=65532:65532", root}, args...)...)
		x.Env = env
		return x
	}
	srv := chroot(append(c.Entrypoint, c.Cmd...)...)
	logs := &testenv.LockedBuffer{}
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := http.Get(base + "/health")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health of the image's entrypoint: %v", err)
		}
	}
	// A sign-up writes the SQLite file in /data as the image's user.
	body := `{"email":"` + testenv.Email() + `","password":"a long enough passphrase","name":"Ada"}`
	r, err := http.Post(base+"/v1/auth/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Errorf("register on the image: %d; want 200", r.StatusCode)
	}
	if out, err := chroot("/gatehouse", "health").CombinedOutput(); err != nil {
		t.Errorf("the HEALTHCHECK command: %v\n%s", err, out)
	}

	run := exec.CommandContext(ctx, "podman", "run", "--rm", "--network=host", "-e", "GATEHOUSE_ADDR=127.0.0.1:1", tag, "version")
	if out, err := run.CombinedOutput(); err != nil {
		t.Logf("podman run cannot start the image on this machine (the entrypoint ran under chroot instead): %v: %s", err, bytes.TrimSpace(out))
	} else if !strings.HasPrefix(string(out), "gatehouse ") {
		t.Errorf("podman run %s version: %q", tag, out)
	}
}
