package kind

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// LoadImages copies images from the engine's local store into every node
// of the cluster, as `kind load docker-image` does: one archive saved by
// the engine, imported into each node's containerd with kind's library. No
// registry is involved; pods then use the images with imagePullPolicy
// IfNotPresent (or Never) and a tag other than latest.
func (p *Provider) LoadImages(ctx context.Context, name string, images ...string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if len(images) == 0 {
		return nil
	}
	e, err := p.engine(ctx)
	if err != nil {
		return err
	}
	nodes, err := e.kind.ListInternalNodes(kindName(name))
	if err != nil {
		return fmt.Errorf("list the nodes of %q: %w", kindName(name), err)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("load images: cluster %q has no nodes", name)
	}
	// Only what some node lacks is saved and loaded: the node image may
	// carry an image already (PostgreSQL in the offline one), and loading
	// again after an upgrade is then cheap.
	var missing []string
	for _, img := range images {
		id, err := localImageID(ctx, e.bin, img)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if nodeImageConfig(n, normalizeRef(img)) != id {
				missing = append(missing, img)
				break
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	p.logger.Info("loading images into the cluster's nodes", "cluster", name, "images", missing)
	images = missing
	tmp, err := os.MkdirTemp("", "oplab-kind-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	archive := filepath.Join(tmp, "images.tar")
	out, err := exec.CommandContext(ctx, e.bin, append([]string{"save", "-o", archive}, images...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s save %s: %w: %s (build or pull the images first)", e.bin, strings.Join(images, " "), err, strings.TrimSpace(string(out)))
	}
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := os.Open(archive)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("load %s into node %s: %w", strings.Join(images, " "), n.String(), err)
		}
	}
	return nil
}

// localImageID is the engine's ID of image (its config digest).
func localImageID(ctx context.Context, bin, image string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "image", "inspect", "--format", "{{.Id}}", image).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("image %s is not in the local %s engine (build it with `make images`, or pull it): %s", image, bin, strings.TrimSpace(string(out)))
	}
	id := strings.TrimSpace(string(out))
	if !strings.HasPrefix(id, "sha256:") {
		id = "sha256:" + id // podman prints the bare digest
	}
	return id, nil
}

// nodeImageConfig is the config digest of ref in the node's containerd,
// read with ctr (the offline node image has no crictl), or "" when the
// node lacks it.
func nodeImageConfig(n nodes.Node, ref string) string {
	var out bytes.Buffer
	if err := n.Command("ctr", "--namespace=k8s.io", "images", "ls", "name=="+ref).SetStdout(&out).Run(); err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		return ""
	}
	fields := strings.Fields(lines[1])
	if len(fields) < 3 {
		return ""
	}
	digest := fields[2]
	for range 3 { // an index names manifests, a manifest names its config
		var doc struct {
			Config    struct{ Digest string }   `json:"config"`
			Manifests []struct{ Digest string } `json:"manifests"`
		}
		out.Reset()
		if err := n.Command("ctr", "--namespace=k8s.io", "content", "get", digest).SetStdout(&out).Run(); err != nil {
			return ""
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			return ""
		}
		if doc.Config.Digest != "" {
			return doc.Config.Digest
		}
		if len(doc.Manifests) == 0 {
			return ""
		}
		digest = doc.Manifests[0].Digest
	}
	return ""
}

// normalizeRef spells an image reference as containerd stores it:
// "postgres:15" is "docker.io/library/postgres:15".
func normalizeRef(ref string) string {
	first, rest, found := strings.Cut(ref, "/")
	if !found {
		return "docker.io/library/" + ref
	}
	if !strings.ContainsAny(first, ".:") && first != "localhost" {
		return "docker.io/" + first + "/" + rest
	}
	return ref
}
