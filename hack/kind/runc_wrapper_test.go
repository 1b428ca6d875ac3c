// Package kind_test checks the kind tooling's runc wrapper, which drops
// CAP_SYS_RESOURCE from what runc is asked to grant.
package kind_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRuncWrapperDropsCapSysResource runs the wrapper with a stand-in runc
// that records its arguments, on a bundle config (create) and an exec
// process file, and checks that only CAP_SYS_RESOURCE is gone from every
// capability set and that runc got the arguments unchanged.
func TestRuncWrapperDropsCapSysResource(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (the wrapper needs it; apt-get install jq)")
	}
	dir := t.TempDir()
	caps := map[string]any{
		"bounding":  []string{"CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_KILL"},
		"effective": []string{"CAP_SYS_RESOURCE", "CAP_CHOWN"},
		"permitted": []string{"CAP_CHOWN"},
	}
	bundle := filepath.Join(dir, "bundle")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(bundle, "config.json"), map[string]any{"process": map[string]any{"capabilities": caps, "args": []string{"CAP_SYS_RESOURCE"}}})
	process := filepath.Join(dir, "process.json")
	writeJSON(t, process, map[string]any{"capabilities": caps})
	record := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "runc")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" >> "+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := [][]string{
		{"--root", "/run/x", "create", "--bundle", bundle, "c1"},
		{"exec", "--process", process, "--detach", "c1"},
	}
	for _, args := range runs {
		cmd := exec.Command("./runc-wrapper", args...)
		cmd.Env = append(os.Environ(), "OPLAB_RUNC="+fake)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("runc-wrapper %v: %v\n%s", args, err, out)
		}
	}
	for _, f := range []string{filepath.Join(bundle, "config.json"), process} {
		var doc map[string]any
		data, _ := os.ReadFile(f)
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		c := doc["capabilities"]
		if p, ok := doc["process"].(map[string]any); ok {
			c = p["capabilities"]
			if got := p["args"].([]any); len(got) != 1 {
				t.Errorf("%s: args changed to %v, want them untouched", f, got)
			}
		}
		for set, want := range map[string][]string{"bounding": {"CAP_CHOWN", "CAP_KILL"}, "effective": {"CAP_CHOWN"}, "permitted": {"CAP_CHOWN"}} {
			var got []string
			for _, v := range c.(map[string]any)[set].([]any) {
				got = append(got, v.(string))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: got %v, want %v", f, set, got, want)
			}
		}
	}
	data, _ := os.ReadFile(record)
	if got, want := strings.TrimSpace(string(data)), strings.Join(runs[0], " ")+"\n"+strings.Join(runs[1], " "); got != want {
		t.Errorf("runc got\n%s\nwant\n%s", got, want)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
