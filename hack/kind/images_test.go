package kind_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPostgresImage starts the PostgreSQL image `make images` builds as the
// operator's pods run it (root, options as arguments, a password): it must
// initialise, accept a query as POSTGRES_USER, and run the server as uid
// 999. Gated like the other kind tests (it needs the engine and the image).
func TestPostgresImage(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a container engine and `make images`; -short")
	}
	if os.Getenv("OPLAB_KIND_TEST") != "1" {
		t.Skip("kind tests skipped: run `make test-kind` (needs a container engine and `make images`)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	name := "oplab-pgtest-" + strings.ReplaceAll(t.Name(), "/", "-")
	docker := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	_, _ = docker("rm", "-f", name)
	if out, err := docker("run", "-d", "--name", name, "-e", "POSTGRES_PASSWORD=secret", "-e", "PGDATA=/var/lib/postgresql/data/pgdata",
		"docker.io/library/postgres:15", "-c", "max_connections=20"); err != nil {
		t.Fatalf("docker run: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = exec.Command("docker", "rm", "-f", name).CombinedOutput() })
	var out string
	var err error
	for range 60 {
		out, err = docker("exec", name, "psql", "-U", "postgres", "-tAc", "show max_connections")
		if err == nil {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil || out != "20" {
		logs, _ := docker("logs", name)
		t.Fatalf("show max_connections: got %q (%v), want 20\nlogs:\n%s", out, err, logs)
	}
	if uid, _ := docker("exec", name, "sh", "-c", "stat -c %u /var/lib/postgresql/data/pgdata"); uid != "999" {
		t.Errorf("data directory owner: got %q, want 999", uid)
	}
}
