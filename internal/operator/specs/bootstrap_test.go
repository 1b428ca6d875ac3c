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
		former       bool   // formerPrimaryFile is beside the data
		wantOut      string
		wantClone    bool
		wantBlocking bool
		wantRemoved  bool // the data directory was removed (and not cloned again)
		// wantStandby: a former primary's data is started in recovery with
		// no upstream and marked as such.
		wantStandby bool
	}{
		{name: "new replica clones the primary", host: "db-1", primaryUp: true, wantOut: "cloning the primary at db-rw", wantClone: true},
		{name: "replica restarts and keeps its data", host: "db-2", primaryUp: true, data: "replica", owner: "uid-1", wantOut: "replica data present"},
		{name: "former primary rejoins as a clone", host: "db-0", primaryUp: true, data: "primary", owner: "uid-1", wantOut: "cloning the primary at db-rw", wantClone: true},
		{name: "pod 0 bootstraps the cluster", host: "db-0", wantOut: "initialising a new cluster"},
		// Never two primaries: a fenced former primary comes back in recovery.
		{name: "former primary with no primary answering starts as a standby", host: "db-1", data: "primary", owner: "uid-1", wantOut: "starting this former primary's data as a standby", wantStandby: true},
		{name: "former primary on pod 0 starts as a standby", host: "db-0", data: "primary", owner: "uid-1", wantOut: "starting this former primary's data as a standby", wantStandby: true},
		{name: "former primary started as a standby is cloned when a primary answers", host: "db-1", primaryUp: true, data: "replica", owner: "uid-1", former: true, wantOut: "cloning the primary at db-rw", wantClone: true},
		{name: "replica with no primary answering starts with its data", host: "db-2", data: "replica", owner: "uid-1", wantOut: "starting with local data"},
		{name: "new replica waits for a primary", host: "db-2", wantOut: "waiting for a primary on db-rw", wantBlocking: true},
		// A claim kept from an earlier PostgresCluster of the same name.
		{name: "earlier cluster's replica data is replaced by a clone", host: "db-1", primaryUp: true, data: "replica", owner: "uid-0", wantOut: "removing the data of an earlier PostgresCluster", wantClone: true},
		{name: "earlier cluster's data on pod 0 is removed before initdb", host: "db-0", data: "primary", owner: "uid-0", wantOut: "removing the data of an earlier PostgresCluster", wantRemoved: true},
		{name: "data with no owner yet is adopted", host: "db-2", primaryUp: true, data: "replica", wantOut: "replica data present"},
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
				must(t, os.WriteFile(filepath.Join(pgdata, "postgresql.auto.conf"), []byte("primary_conninfo = 'host=db-rw'\nwork_mem = '8MB'\n"), 0o600))
			}
			formerPath := filepath.Join(filepath.Dir(pgdata), formerPrimaryFile)
			if tt.former {
				must(t, os.WriteFile(formerPath, nil, 0o600))
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
			_, err = os.Stat(formerPath)
			if marked := err == nil; marked != tt.wantStandby {
				t.Errorf("%s beside the data: got %v, want %v; output:\n%s", formerPrimaryFile, marked, tt.wantStandby, out)
			}
			if tt.wantStandby {
				if _, err := os.Stat(filepath.Join(pgdata, "standby.signal")); err != nil {
					t.Errorf("a former primary must start in recovery: %v", err)
				}
				auto, _ := os.ReadFile(filepath.Join(pgdata, "postgresql.auto.conf"))
				if strings.Contains(string(auto), "primary_conninfo") || !strings.Contains(string(auto), "work_mem") {
					t.Errorf("postgresql.auto.conf = %q, want primary_conninfo removed and the rest kept", auto)
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
