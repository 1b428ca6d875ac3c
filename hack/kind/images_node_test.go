package kind_test

import (
	"context"
	"io"
	"os/exec"
	"path"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// engineNode is a container of the kind node image seen as kind sees a
// node: commands run in it with `docker exec`, as kind's docker provider
// runs them.
type engineNode struct{ name string }

func (n engineNode) String() string              { return n.name }
func (n engineNode) Role() (string, error)       { return "control-plane", nil }
func (n engineNode) IP() (string, string, error) { return "", "", nil }
func (n engineNode) SerialLogs(io.Writer) error  { return nil }
func (n engineNode) Command(c string, a ...string) kindexec.Cmd {
	return kindexec.Command("docker", append([]string{"exec", "-i", n.name, c}, a...)...)
}
func (n engineNode) CommandContext(ctx context.Context, c string, a ...string) kindexec.Cmd {
	return kindexec.CommandContext(ctx, "docker", append([]string{"exec", "-i", n.name, c}, a...)...)
}

// TestOperatorImagesLoadIntoNode loads each third-party image into a
// container of the kind node image `make images` builds, with kind's own
// loader (nodeutils.LoadImageArchive, what `kind load` and oplab's kind
// provider call), and finds it unpacked in the node's containerd under its
// tag, where a pod with imagePullPolicy IfNotPresent finds it.
func TestOperatorImagesLoadIntoNode(t *testing.T) {
	images := []string{zalandoImage, spiloImage, spotahomeImage, redisImage}
	node := kindNodeImage(t)
	needImages(t, append(images, node)...)
	e := newEngine(t, 5*time.Minute)
	// As kind's docker provider runs a node: privileged, /var a volume
	// (containerd's snapshots need a file system that is not overlay).
	name := e.start("node", "--privileged", "--tmpfs", "/tmp", "--tmpfs", "/run", "--volume", "/var",
		"--entrypoint", "sleep", node, "infinity")
	if _, _, err := e.run("exec", "-d", name, "containerd"); err != nil {
		t.Fatalf("start containerd in the node: %v", err)
	}
	if _, err := e.eventually(name, "ctr version >/dev/null && echo up", "up", time.Minute); err != nil {
		t.Fatalf("containerd in the node: %v\n%s", err, e.logs(name))
	}
	n := engineNode{name: name}
	for _, img := range images {
		t.Run(path.Base(img), func(t *testing.T) {
			save := exec.CommandContext(e.ctx, "docker", "save", img)
			archive, err := save.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := save.Start(); err != nil {
				t.Fatalf("docker save %s: %v", img, err)
			}
			loadErr := nodeutils.LoadImageArchive(n, archive)
			if err := save.Wait(); err != nil {
				t.Fatalf("docker save %s: %v", img, err)
			}
			if loadErr != nil {
				t.Fatalf("kind's LoadImageArchive %s: %v", img, loadErr)
			}
			ref := img
			if strings.Count(strings.SplitN(img, "/", 2)[0], ".") == 0 {
				ref = "docker.io/" + img
			}
			out, err := e.shell(name, "ctr -n k8s.io images check name=="+ref+" | awk 'NR > 1 {print $1, $4, $NF}'")
			if want := ref + " complete true"; out != want || err != nil { // present, complete, unpacked
				t.Errorf("ctr images check in the node: got %q (%v), want %q", out, err, want)
			}
		})
	}
}

// kindNodeImage is the node image `make images` builds
// (oplab.local/kind-node:<Kubernetes version>).
func kindNodeImage(t *testing.T) string {
	out, _ := exec.Command("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "oplab.local/kind-node").Output()
	if img, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); img != "" {
		return img
	}
	return "oplab.local/kind-node (built by `make images`)"
}
