package kind

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		line             string
		name             string
		done, ok, isStep bool
	}{
		{" • Ensuring node image (oplab.local/kind-node:v1.36.1) 🖼  ...\n", "Ensuring node image (oplab.local/kind-node:v1.36.1)", false, false, true},
		{" ✓ Ensuring node image (oplab.local/kind-node:v1.36.1) 🖼\n", "Ensuring node image (oplab.local/kind-node:v1.36.1)", true, true, true},
		{" ✗ Starting control-plane 🕹️\n", "Starting control-plane", true, false, true},
		{" • Waiting ≤ 5m0s for control-plane = Ready ⏳  ...\n", "Waiting ≤ 5m0s for control-plane = Ready", false, false, true},
		{"Creating cluster \"oplab-a\" ...\n", "", false, false, false},
		{"", "", false, false, false},
	}
	for _, tt := range tests {
		name, done, ok, isStep := parseStatus(tt.line)
		if name != tt.name || done != tt.done || ok != tt.ok || isStep != tt.isStep {
			t.Errorf("parseStatus(%q) = %q, %v, %v, %v; want %q, %v, %v, %v", tt.line, name, done, ok, isStep, tt.name, tt.done, tt.ok, tt.isStep)
		}
	}
}

func TestReporterPairsKindSteps(t *testing.T) {
	var got []string
	r := &reporter{progress: func(s providers.Step) {
		state := "start"
		if s.Done {
			state = "done"
			if s.Err != nil {
				state = "failed"
			}
		}
		got = append(got, state+" "+s.Name)
	}}
	r.kindStep("Preparing nodes", false, false)
	r.kindStep("Preparing nodes", true, true)
	r.kindStep("Starting control-plane", false, false)
	r.kindStep("Installing CNI", false, false) // kind's Start ends the previous step
	r.kindStep("Installing CNI", true, false)
	r.kindStep("Waiting for control-plane", false, false)
	r.finish()
	want := []string{
		"start Preparing nodes", "done Preparing nodes",
		"start Starting control-plane", "done Starting control-plane",
		"start Installing CNI", "failed Installing CNI",
		"start Waiting for control-plane", "done Waiting for control-plane",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestClusterConfig(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "kind.yaml")
	const yaml = `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri"]
    restrict_oom_score_adj = true
`
	if err := os.WriteFile(base, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "bin")
	p, err := New(Options{DataDir: dir, ConfigPath: base, Shared: []string{shared}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.clusterConfig("c1", providers.CreateOptions{APIServerPort: 16443})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cfg.KubeadmConfigPatches), 2; got != want {
		t.Fatalf("kubeadm patches: got %d, want %d (the timeouts, then the base config's)", got, want)
	}
	if got := cfg.KubeadmConfigPatches[0]; !strings.Contains(got, "kubernetesAPICall: 5m0s") {
		t.Errorf("first kubeadm patch: got %q, want the init timeouts", got)
	}
	if got := cfg.KubeadmConfigPatches[1]; !strings.Contains(got, "failCgroupV1: false") {
		t.Errorf("second kubeadm patch: got %q, want the base config's", got)
	}
	if got, want := len(cfg.ContainerdConfigPatches), 1; got != want {
		t.Errorf("containerd patches: got %d, want %d", got, want)
	}
	if got, want := cfg.Networking.APIServerAddress, "127.0.0.1"; got != want {
		t.Errorf("API server address: got %q, want %q", got, want)
	}
	if got, want := cfg.Networking.APIServerPort, int32(16443); got != want {
		t.Errorf("API server port: got %d, want %d", got, want)
	}
	// The node binds the cluster's workspace, writable, and the shared
	// directories, read-only, each at its own path.
	ws := p.workspace("c1")
	want := []v1alpha4.Mount{{HostPath: ws, ContainerPath: ws}, {HostPath: shared, ContainerPath: shared, Readonly: true}}
	if len(cfg.Nodes) != 1 || !reflect.DeepEqual(cfg.Nodes[0].ExtraMounts, want) {
		t.Errorf("nodes: got %+v, want one control-plane node with mounts %+v", cfg.Nodes, want)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("kind: Cluster\nnodez: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no data dir", Options{}, "data directory"},
		{"unknown engine", Options{DataDir: dir, Engine: "lxc"}, `unknown container engine "lxc"`},
		{"missing config", Options{DataDir: dir, ConfigPath: filepath.Join(dir, "none.yaml")}, "read kind config"},
		{"unknown field", Options{DataDir: dir, ConfigPath: typo}, "nodez"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Without Docker or Podman on PATH every operation fails with ErrNoEngine
// and a message that says what to install, and nothing is created.
func TestNoEngineSaysWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	p, err := New(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Info().Capabilities; !got.RealContainers || !got.LoadImages || got.HostProcesses {
		t.Errorf("capabilities: got %+v, want real containers and image loading, no host processes", got)
	}
	err = p.Create(context.Background(), "alice", providers.CreateOptions{})
	if !errors.Is(err, ErrNoEngine) {
		t.Fatalf("Create: got %v, want ErrNoEngine", err)
	}
	for _, want := range []string{"Docker or Podman", "apt-get install docker.io"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := p.List(context.Background()); !errors.Is(err, ErrNoEngine) {
		t.Errorf("List: got %v, want ErrNoEngine", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("data dir has %d entries after a failed create, want 0", len(entries))
	}
}

func TestCheckName(t *testing.T) {
	for name, valid := range map[string]bool{
		"alice": true, "a": true, "a-1": true, strings.Repeat("a", 40): true,
		"": false, "-a": false, "a-": false, "Alice": false, "a_b": false, strings.Repeat("a", 41): false,
	} {
		err := checkName(name)
		if (err == nil) != valid {
			t.Errorf("checkName(%q) = %v, want valid %v", name, err, valid)
		}
		if err != nil && !errors.Is(err, providers.ErrInvalidName) {
			t.Errorf("checkName(%q) = %v, want ErrInvalidName", name, err)
		}
	}
}

func TestNormalizeRef(t *testing.T) {
	for ref, want := range map[string]string{
		"postgres:15":                   "docker.io/library/postgres:15",
		"kindest/node:v1":               "docker.io/kindest/node:v1",
		"oplab.dev/pg-operator:0.1.0":   "oplab.dev/pg-operator:0.1.0",
		"localhost/x:1":                 "localhost/x:1",
		"registry.k8s.io/pause:3.10":    "registry.k8s.io/pause:3.10",
		"docker.io/library/postgres:15": "docker.io/library/postgres:15",
	} {
		if got := normalizeRef(ref); got != want {
			t.Errorf("normalizeRef(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestCommandOutputKeepsTheTail(t *testing.T) {
	var out strings.Builder
	for i := range 40 {
		fmt.Fprintf(&out, "line %d\n", i)
	}
	err := fmt.Errorf("init node: %w", &kindexec.RunError{Command: []string{"kubeadm", "init"}, Output: []byte(out.String()), Inner: errors.New("exit status 1")})
	got := commandOutput(err)
	if !strings.Contains(got, "line 39") || !strings.Contains(got, "line 15") || strings.Contains(got, "line 14\n") {
		t.Errorf("got %q, want lines 15 to 39", got)
	}
	if got := commandOutput(errors.New("plain")); got != "" {
		t.Errorf("plain error: got %q, want empty", got)
	}
}

// TestWallScript: the node's chain lets through what is established, then
// the cluster's own addresses and its DNS servers on port 53, before it
// refuses anything; IPv6's refusals leave ICMPv6 (neighbour discovery)
// alone; and the chain goes first in OUTPUT and FORWARD, once. What the
// rules do in a real node: TestKindLifecycle (internal/cluster).
func TestWallScript(t *testing.T) {
	s := wallSpec{
		allow: []netip.Prefix{netip.MustParsePrefix("10.213.1.2/32"), netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fc00:f853::2/128")},
		dns:   nameservers("search x\nnameserver 10.213.1.2\nnameserver fe80::1%eth0\noptions ndots:0\n"),
		deny:  []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fc00::/7")},
	}
	if got, want := fmt.Sprint(s.dns), "[10.213.1.2 fe80::1]"; got != want {
		t.Errorf("name servers: got %s, want %s", got, want)
	}
	script := s.script()
	lines := strings.Split(script, "\n")
	index := func(substr string) int {
		t.Helper()
		i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, substr) })
		if i < 0 {
			t.Fatalf("no line with %q in:\n%s", substr, script)
		}
		return i
	}
	est, own, dns, deny := index("iptables -w -A OPLAB-WALL -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN"),
		index("iptables -w -A OPLAB-WALL -d 10.213.1.2/32 -j RETURN"),
		index("iptables -w -A OPLAB-WALL -d 10.213.1.2 -p udp --dport 53 -j RETURN"),
		index("iptables -w -A OPLAB-WALL -d 10.0.0.0/8 -j REJECT")
	if !(est < own && own < dns && dns < deny) {
		t.Errorf("IPv4 order: established %d, own %d, DNS %d, refused %d; want that order", est, own, dns, deny)
	}
	if i := index("ip6tables -w -A OPLAB-WALL -d fc00::/7 -p tcp -j REJECT"); i < index("ip6tables -w -A OPLAB-WALL -d fc00:f853::2/128 -j RETURN") {
		t.Errorf("IPv6 refuses before its own addresses are let through")
	}
	if strings.Contains(script, "ip6tables -w -A OPLAB-WALL -d fc00::/7 -j REJECT") || strings.Contains(script, "-d 10.0.0.0/8 -p") {
		t.Errorf("IPv6 refuses every protocol, or IPv4 only some:\n%s", script)
	}
	if strings.Contains(script, "ip6tables -w -A OPLAB-WALL -d 10.") || strings.Contains(script, "iptables -w -A OPLAB-WALL -d fc00") {
		t.Errorf("an address in the other family's rules:\n%s", script)
	}
	for _, chain := range []string{"OUTPUT", "FORWARD"} {
		if want := "iptables -w -I " + chain + " 1 -j OPLAB-WALL"; strings.Count(script, "\n"+want) != 1 {
			t.Errorf("want one %q for IPv4 in:\n%s", want, script)
		}
	}
}
