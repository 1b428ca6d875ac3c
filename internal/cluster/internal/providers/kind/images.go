package kind

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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
