package kind

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"unicode/utf8"
)

// OfflineNodeImage is the node image `make images` builds with no registry:
// hack/kind/build-images.sh tags it with the Kubernetes version of
// hack/kind/nodebins/go.mod (a test holds the two to agree).
const OfflineNodeImage = "oplab.local/kind-node:v1.36.1"

// NodeImageEnv names the variable that chooses another node image (oplab's
// CLI reads it into Options.NodeImage); the errors here name it.
const NodeImageEnv = "OPLAB_KIND_NODE_IMAGE"

// ErrNoNodeImage is returned (wrapped) by Create when the engine has no
// node image and cannot pull one; its message says what to run.
var ErrNoNodeImage = errors.New("no kind node image")

// imageStore is what choosing a node image asks of the container engine.
type imageStore interface {
	hasImage(ctx context.Context, ref string) bool
	pullImage(ctx context.Context, ref string) error
}

// nodeImage returns the node image of a new cluster, which the engine has
// once it returns: the configured one; else, with none configured, the one
// `make images` built when the engine has it (a machine without a registry
// then needs no variable), else DefaultNodeImage. A missing image is pulled
// here, once: kind's own pull retries for seconds and ends in the engine's
// raw error, which on a machine without a registry says nothing of `make
// images`.
func nodeImage(ctx context.Context, s imageStore, engine, configured string) (string, error) {
	candidates := []string{configured}
	if configured == "" {
		candidates = []string{OfflineNodeImage, DefaultNodeImage}
	}
	for _, ref := range candidates {
		if s.hasImage(ctx, ref) {
			return ref, nil
		}
	}
	ref := candidates[len(candidates)-1]
	if err := s.pullImage(ctx, ref); err != nil {
		has := "no " + withoutDigest(ref)
		if len(candidates) > 1 {
			has = "neither " + OfflineNodeImage + " nor " + withoutDigest(ref)
		}
		return "", fmt.Errorf("%w: the %s engine has %s, and pulling it failed (%v): run `make images` to build %s without a registry, or set %s to a node image the engine has",
			ErrNoNodeImage, engine, has, err, OfflineNodeImage, NodeImageEnv)
	}
	return ref, nil
}

// withoutDigest is ref as people read it: the digest pins what is pulled,
// but in a message only the name and tag tell images apart.
func withoutDigest(ref string) string {
	name, _, _ := strings.Cut(ref, "@")
	return name
}

// pullSteps reports the engine's pulls as steps of a create: a node image
// is about a gigabyte.
type pullSteps struct {
	*engine
	r *reporter
}

func (s pullSteps) pullImage(ctx context.Context, ref string) error {
	return s.r.step("Pulling node image "+ref, func() error { return s.engine.pullImage(ctx, ref) })
}

// hasImage reports whether the engine's local store has ref.
func (e *engine) hasImage(ctx context.Context, ref string) bool {
	_, err := localImageID(ctx, e.bin, ref)
	return err == nil
}

// pullImage pulls ref; its error is the engine's last line, the one that
// says why.
func (e *engine) pullImage(ctx context.Context, ref string) error {
	out, err := exec.CommandContext(ctx, e.bin, "pull", ref).CombinedOutput()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return errors.New(shorten(last, 200))
	}
	return err
}

// shorten cuts s to at most n bytes, on a rune boundary, marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
