package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

var _ providers.Capped = (*Provider)(nil)

// A node's CPU cap (Options.Budget's CPU, one core) is the engine's CFS
// quota on the node container. A start's setup (the operator's install,
// the lab's first objects made ready) and a build of the learner's
// controller are a few CPU-seconds their learner waits for; at the cap they
// take twice as long or more (a controller's edit, about 6 CPU-seconds,
// over the 10 s a learner should wait). So, as on the embedded backend, a
// new cluster may be left without its cap until its lab is set up
// (CreateOptions.Unsettled, then Settle), and a settled one may be let go
// of it for a build (Unsettle, then Settle). The session manager's build
// bursts bound how many nodes run uncapped for a build at once; Maintain
// caps a node whose Settle never came.
//
// Whether a node runs uncapped, and since when, is the file unsettledFile
// in its cluster's directory: its modification time is when. The engine
// cannot unset a CPU quota once set (it takes only another one), so a node
// without its cap has a quota of the engine's every CPU, which bounds
// nothing.

// unsettledFile marks a cluster whose node runs without its CPU cap.
const unsettledFile = "unsettled"

// settleAfter is how long a node may run without its CPU cap before
// Maintain caps it: far longer than a start and its lab's setup or a build
// take, so that only a node whose settler is gone waits for it.
const settleAfter = 5 * time.Minute

func (p *Provider) unsettledPath(name string) string {
	return filepath.Join(p.clusterDir(name), unsettledFile)
}

// unsettledSince reports whether cluster name's node runs without its CPU
// cap, and since when.
func (p *Provider) unsettledSince(name string) (time.Time, bool, error) {
	fi, err := os.Stat(p.unsettledPath(name))
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return fi.ModTime(), true, nil
}

// markUnsettled records that cluster name's node runs without its cap
// from now on.
func (p *Provider) markUnsettled(name string) error {
	return os.WriteFile(p.unsettledPath(name), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600)
}

// existing returns the engine when cluster name exists, else ErrNotFound.
func (p *Provider) existing(ctx context.Context, name string) (*engine, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(p.clusterDir(name)); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	}
	return p.engine(ctx)
}

// Settle caps the CPU of cluster name's node at its budget's when it runs
// without it; see providers.Capped.
func (p *Provider) Settle(ctx context.Context, name string) error {
	p.settleMu.Lock()
	defer p.settleMu.Unlock()
	e, err := p.existing(ctx, name)
	if err != nil {
		return err
	}
	if _, unsettled, err := p.unsettledSince(name); err != nil || !unsettled {
		return err
	}
	if err := e.setCPU(ctx, name, p.o.Budget.CPU); err != nil {
		return fmt.Errorf("cap the CPU of cluster %q: %w", name, err)
	}
	return os.Remove(p.unsettledPath(name))
}

// Unsettle lets cluster name's node run without its CPU cap until Settle,
// and says whether there was a cap to lift; see providers.Capped.
func (p *Provider) Unsettle(ctx context.Context, name string) (bool, error) {
	p.settleMu.Lock()
	defer p.settleMu.Unlock()
	e, err := p.existing(ctx, name)
	if err != nil {
		return false, err
	}
	if p.o.Budget.CPU <= 0 {
		return false, nil
	}
	if _, unsettled, err := p.unsettledSince(name); err != nil || unsettled {
		return false, err
	}
	// Marked first: if the update is lost half-way, Settle or Maintain
	// puts the cap back rather than never.
	if err := p.markUnsettled(name); err != nil {
		return false, err
	}
	if err := e.setCPU(ctx, name, 0); err != nil {
		return false, fmt.Errorf("lift the CPU cap of cluster %q: %w", name, err)
	}
	return true, nil
}

// Maintain caps a node left without its CPU cap longer than settleAfter;
// see providers.Capped. The node's memory, tasks and disk are the
// engine's to bound.
func (p *Provider) Maintain(ctx context.Context, name string) error {
	since, unsettled, err := p.unsettledSince(name)
	if err != nil || !unsettled || time.Since(since) <= settleAfter {
		return err
	}
	p.logger.Info("settling a cluster its maker left without its CPU cap", "cluster", name)
	return p.Settle(ctx, name)
}

// setCPU sets the CPU quota of cluster name's node to millicores, or to
// every CPU of the engine's machine when zero.
func (e *engine) setCPU(ctx context.Context, name string, millicores int64) error {
	if millicores <= 0 {
		n, err := e.cpus(ctx)
		if err != nil {
			return err
		}
		millicores = 1000 * int64(n)
	}
	cpus := strconv.FormatFloat(float64(millicores)/1000, 'f', 3, 64)
	out, err := exec.CommandContext(ctx, e.bin, "update", "--cpus", cpus, kindName(name)+"-control-plane").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s update --cpus %s: %w: %s", e.bin, cpus, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// cpus returns how many CPUs the engine's machine has, the most a
// container's quota may be; asked once.
func (e *engine) cpus(ctx context.Context) (int, error) {
	e.ncpuMu.Lock()
	defer e.ncpuMu.Unlock()
	if e.ncpu > 0 {
		return e.ncpu, nil
	}
	format := "{{.NCPU}}"
	if e.bin == "podman" {
		format = "{{.Host.CPUs}}"
	}
	out, err := exec.CommandContext(ctx, e.bin, "info", "--format", format).Output()
	if err != nil {
		return 0, fmt.Errorf("%s info: %w", e.bin, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s info: not a number of CPUs: %q", e.bin, strings.TrimSpace(string(out)))
	}
	e.ncpu = n
	return n, nil
}
