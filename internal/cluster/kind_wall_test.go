package cluster_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// checkWall proves a kind node's network wall (the kind provider's
// wall.go) on a real cluster: a peer container on the nodes' network,
// standing for another learner's node, and a listener of this process on
// the machine's address on that network are reached from the machine
// itself, and refused to a pod of the cluster and to the node's own
// processes (where the API server calls a webhook from), as is the cloud
// metadata address; the cluster's own API server, by its Service and by
// the node's address, is reached from both.
func checkWall(t *testing.T, ctx context.Context, c *clustertest.Cluster, nodeImage string) {
	t.Helper()
	node := "oplab-" + c.Name + "-control-plane"
	ws, err := c.Provider.Workspace(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	dialer := filepath.Join(ws, "dialer")
	build := exec.CommandContext(ctx, "go", "build", "-o", dialer, "./testdata/dialer")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the dialer: %v: %s", err, out)
	}
	if err := os.Chmod(dialer, 0o755); err != nil {
		t.Fatal(err)
	}

	// The node's network, its address and the machine's on it.
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f",
		"{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{$v.IPAddress}} {{$v.Gateway}}{{end}}", node).Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 3 {
		t.Fatalf("the node's network: %q, %v", out, err)
	}
	network, nodeIP, gateway := f[0], f[1], f[2]

	peer := "oplab-t-wallpeer-" + c.Name
	if out, err := exec.CommandContext(ctx, "docker", "run", "-d", "--name", peer, "--network", network,
		"-v", dialer+":/dialer:ro", "--entrypoint", "/dialer", nodeImage, "listen", "0.0.0.0:7000").CombinedOutput(); err != nil {
		t.Fatalf("start the peer: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", peer).Run() })
	out, err = exec.CommandContext(ctx, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", peer).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("the peer's address: %q, %v", out, err)
	}
	peerAddr := net.JoinHostPort(strings.TrimSpace(string(out)), "7000")

	l, err := net.Listen("tcp", net.JoinHostPort(gateway, "0"))
	if err != nil {
		t.Fatalf("listen on the machine's address on the nodes' network: %v", err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	machineAddr := l.Addr().String()
	const metadata = "169.254.169.254:80"

	// From the machine, the peer answers: what the wall refuses below is
	// there to be reached.
	if out, err := exec.CommandContext(ctx, dialer, "dial", peerAddr).CombinedOutput(); err != nil || !strings.Contains(string(out), peerAddr+" ok") {
		t.Fatalf("the machine dials the peer: %s %v", out, err)
	}

	want := func(from, out string, reached []string, refused []string) {
		t.Helper()
		for _, a := range reached {
			if !strings.Contains(out, a+" ok") {
				t.Errorf("%s: want %s reached; got:\n%s", from, a, out)
			}
		}
		for _, a := range refused {
			var line string
			for l := range strings.Lines(out) {
				if strings.HasPrefix(l, a+" ") {
					line = l
				}
			}
			// The wall's REJECT answers at once; a timeout or an
			// unreachable network would be something else.
			if !strings.Contains(line, "failed:") || !strings.Contains(line, "connection refused") {
				t.Errorf("%s: want %s refused by the wall; got:\n%s", from, a, out)
			}
		}
	}

	// A pod of the cluster, confined as a learner's build is.
	path, args, err := c.Provider.Confine(ctx, c.Name, cluster.Sandbox{ReadOnly: []string{dialer}}, dialer,
		[]string{"dial", "10.96.0.1:443", peerAddr, machineAddr, metadata})
	if err != nil {
		t.Fatal(err)
	}
	var podOut bytes.Buffer
	if _, err := c.Provider.Run(ctx, c.Name, cluster.Command{Path: path, Args: args, Stdout: &podOut}); err != nil {
		t.Fatalf("run the dialer in a pod: %v: %s", err, podOut.String())
	}
	t.Logf("from a pod:\n%s", podOut.String())
	want("a pod", podOut.String(), []string{"10.96.0.1:443"}, []string{peerAddr, machineAddr, metadata})

	// The node's own processes: the API server calls webhooks from here.
	out, err = exec.CommandContext(ctx, "docker", "exec", node, dialer, "dial",
		net.JoinHostPort(nodeIP, "6443"), peerAddr, machineAddr, metadata).CombinedOutput()
	if err != nil {
		t.Fatalf("run the dialer in the node: %v: %s", err, out)
	}
	t.Logf("from the node:\n%s", out)
	want("the node", string(out), []string{net.JoinHostPort(nodeIP, "6443")}, []string{peerAddr, machineAddr, metadata})
}
