package cluster_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestControlPlaneVersions checks that every built binary reports the version
// pinned in hack/tools/controlplane/go.mod: the version stamp is right and
// the binaries are not stale.
func TestControlPlaneVersions(t *testing.T) {
	bin := clustertest.BinDir(t)
	pins := pinnedVersions(t)
	tests := []struct {
		binary string
		args   []string
		want   string
	}{
		{"kube-controlplane", []string{"--version"}, "Kubernetes " + pins["k8s.io/kubernetes"]},
		{"kube-controlplane", []string{"--version"}, "kwok version " + strings.TrimPrefix(pins["sigs.k8s.io/kwok"], "v")},
		{"kubectl", []string{"version", "--client"}, "Client Version: " + pins["k8s.io/kubernetes"]},
		{"etcd", []string{"--version"}, "etcd Version: " + strings.TrimPrefix(pins["go.etcd.io/etcd/server/v3"], "v")},
	}
	for _, tt := range tests {
		t.Run(tt.binary+" "+tt.want, func(t *testing.T) {
			out, err := exec.Command(filepath.Join(bin, tt.binary), tt.args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", tt.binary, tt.args, err, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("%s %v: got %q, want it to contain %q", tt.binary, tt.args, out, tt.want)
			}
		})
	}
}

// pinnedVersions reads the require lines of the control-plane tools module.
func pinnedVersions(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "hack", "tools", "controlplane", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pins := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && strings.HasPrefix(fields[1], "v") && !strings.Contains(sc.Text(), "=>") {
			pins[fields[0]] = fields[1]
		}
	}
	for _, m := range []string{"k8s.io/kubernetes", "sigs.k8s.io/kwok", "go.etcd.io/etcd/server/v3"} {
		if pins[m] == "" {
			t.Fatalf("no pinned version of %s in hack/tools/controlplane/go.mod", m)
		}
	}
	return pins
}

// TestControlPlaneBadArguments: kube-controlplane refuses arguments it cannot
// run, naming the problem, before starting anything.
func TestControlPlaneBadArguments(t *testing.T) {
	bin := filepath.Join(clustertest.BinDir(t), "kube-controlplane")
	tests := []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", "usage: kube-controlplane COMPONENT FLAGS"},
		{[]string{"kubelet"}, "", `unknown component "kubelet"`},
		{[]string{"kube-scheduler", "---", "kube-scheduler"}, "", `component "kube-scheduler" given twice`},
		{[]string{"kube-scheduler", "---", "---", "kwok"}, "", "empty argument group"},
		{[]string{"kube-scheduler", "--no-such-flag"}, "", "kube-scheduler: unknown flag: --no-such-flag"},
		{[]string{"kube-scheduler"}, "KUBE_CONTROLPLANE_STARTUP_GOGC=fast", `KUBE_CONTROLPLANE_STARTUP_GOGC="fast": want a positive percentage`},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.env+" "+strings.Join(tt.args, " ")), func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			if tt.env != "" {
				cmd.Env = append(os.Environ(), tt.env)
			}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("kube-controlplane %q: exit status 0, want an error\n%s", tt.args, out)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("kube-controlplane %q: got %q, want it to contain %q", tt.args, out, tt.want)
			}
		})
	}
}
