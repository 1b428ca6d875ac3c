package specs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBootstrapScript runs the init container's script with stand-ins for
// pg_isready and pg_basebackup, for each state an instance can start in.
func TestBootstrapScript(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("sh not found: %v", err)
	}
	tests := []struct {
		name         string
		host         string // HOSTNAME
		primaryUp    bool
		data         string // "", "primary" or "replica"
		owner        string // the UID in the owner file beside the data, if any
		wantOut      string
		wantClone    bool
		wantBlocking bool
		wantRemoved  bool // the data directory was removed (and not cloned again)
	}{
		{"new replica clones the primary", "db-1", true, "", "", "cloning the primary at db-rw", true, false, false},
		{"replica restarts and keeps its data", "db-2", true, "replica", "uid-1", "replica data present", false, false, false},
		{"former primary rejoins as a clone", "db-0", true, "primary", "uid-1", "cloning the primary at db-rw", true, false, false},
		{"pod 0 bootstraps the cluster", "db-0", false, "", "", "starting with local data", false, false, false},
		{"primary restarts with its data", "db-1", false, "primary", "uid-1", "starting with local data", false, false, false},
		{"new replica waits for a primary", "db-2", false, "", "", "waiting for a primary on db-rw", false, true, false},
		// A claim kept from an earlier PostgresCluster of the same name.
		{"earlier cluster's replica data is replaced by a clone", "db-1", true, "replica", "uid-0", "removing the data of an earlier PostgresCluster", true, false, false},
		{"earlier cluster's data on pod 0 is removed before initdb", "db-0", false, "primary", "uid-0", "removing the data of an earlier PostgresCluster", false, false, true},
		{"data with no owner yet is adopted", "db-2", true, "replica", "", "replica data present", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin, pgdata := filepath.Join(dir, "bin"), filepath.Join(dir, "data", "pgdata")
			must(t, os.MkdirAll(bin, 0o755))
			must(t, os.MkdirAll(filepath.Dir(pgdata), 0o755)) // the volume's mount
			isready := "exit 1"
			if tt.primaryUp {
				isready = "exit 0"
			}
			stub(t, bin, "pg_isready", isready)
			stub(t, bin, "pg_basebackup", `mkdir -p "$PGDATA" && echo 16 > "$PGDATA/PG_VERSION" && touch "$PGDATA/standby.signal" "$PGDATA/cloned"`)
			if tt.data != "" {
				must(t, os.MkdirAll(pgdata, 0o700))
				must(t, os.WriteFile(filepath.Join(pgdata, "PG_VERSION"), []byte("16\n"), 0o600))
				if tt.data == "replica" {
					must(t, os.WriteFile(filepath.Join(pgdata, "standby.signal"), nil, 0o600))
				}
			}
			ownerPath := filepath.Join(filepath.Dir(pgdata), ownerFile)
			if tt.owner != "" {
				must(t, os.WriteFile(ownerPath, []byte(tt.owner+"\n"), 0o600))
			}
			script := filepath.Join(dir, BootstrapScript)
			must(t, os.WriteFile(script, []byte(bootstrapSh), 0o644))

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, sh, script)
			cmd.WaitDelay = 100 * time.Millisecond // do not wait for the script's sleep
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOSTNAME=" + tt.host, "PGDATA=" + pgdata, "PRIMARY_HOST=db-rw", "CLUSTER_UID=uid-1"}
			out, err := cmd.CombinedOutput()
			if tt.wantBlocking {
				if ctx.Err() == nil {
					t.Fatalf("script ended (%v), want it to wait for a primary; output:\n%s", err, out)
				}
			} else if err != nil {
				t.Fatalf("script failed: %v; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), tt.wantOut) {
				t.Errorf("output %q lacks %q", out, tt.wantOut)
			}
			_, err = os.Stat(filepath.Join(pgdata, "cloned"))
			if cloned := err == nil; cloned != tt.wantClone {
				t.Errorf("cloned: got %v, want %v; output:\n%s", cloned, tt.wantClone, out)
			}
			_, err = os.Stat(filepath.Join(pgdata, "PG_VERSION"))
			if removed := tt.data != "" && os.IsNotExist(err); removed != tt.wantRemoved {
				t.Errorf("data directory removed: got %v, want %v; output:\n%s", removed, tt.wantRemoved, out)
			}
			if got, err := os.ReadFile(ownerPath); err != nil || strings.TrimSpace(string(got)) != "uid-1" {
				t.Errorf("owner file: got %q (%v), want uid-1", got, err)
			}
			if tt.wantClone {
				if _, err := os.Stat(filepath.Join(pgdata, "standby.signal")); err != nil {
					t.Errorf("a clone must start as a replica: %v", err)
				}
			}
		})
	}
}

func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
