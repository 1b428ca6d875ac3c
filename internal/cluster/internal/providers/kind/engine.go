package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
)

// ErrNoEngine is returned (wrapped) when neither Docker nor Podman runs.
var ErrNoEngine = errors.New("no container engine for kind")

// engine is a detected container engine and kind's provider on it.
type engine struct {
	bin  string // "docker" or "podman": kind shells out to it too
	kind *kindcluster.Provider

	ncpuMu sync.Mutex
	ncpu   int // the engine's CPUs, once asked (see cpus)
}

// engine detects the container engine once it answers; a failure is not
// remembered, so starting Docker later works without restarting oplab.
func (p *Provider) engine(ctx context.Context) (*engine, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eng != nil {
		return p.eng, nil
	}
	bin, err := detectEngine(ctx, p.o.Engine)
	if err != nil {
		return nil, err
	}
	opt := kindcluster.ProviderWithDocker()
	if bin == "podman" {
		opt = kindcluster.ProviderWithPodman()
	}
	p.eng = &engine{bin: bin, kind: kindcluster.NewProvider(opt, kindcluster.ProviderWithLogger(kindLogger{p.logger}))}
	p.logger.Debug("kind provider uses a container engine", "engine", bin)
	return p.eng, nil
}

// installHint says what to install or start, for error messages.
const installHint = "kind clusters need Docker or Podman: install one (Debian/Ubuntu: `apt-get install docker.io`, " +
	"or see https://docs.docker.com/engine/install/), start it, and make sure this user may use it; " +
	"in the oplab repository, `eval \"$(make -s kind-env)\"` does this on a Debian machine"

// detectEngine returns the engine to use: want when given, else Docker when
// its CLI is installed, else Podman. The engine must answer `info`.
func detectEngine(ctx context.Context, want string) (string, error) {
	candidates := []string{"docker", "podman"}
	if want != "" {
		candidates = []string{want}
	}
	var errs []error
	for _, bin := range candidates {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		if err := ping(ctx, bin); err != nil {
			errs = append(errs, err)
			continue
		}
		return bin, nil
	}
	if len(errs) == 0 {
		return "", fmt.Errorf("%w: neither %s is installed: %s", ErrNoEngine, strings.Join(candidates, " nor "), installHint)
	}
	return "", fmt.Errorf("%w: %w: %s", ErrNoEngine, errors.Join(errs...), installHint)
}

func ping(ctx context.Context, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		return fmt.Errorf("%s is installed but its engine does not answer (%s)", bin, msg)
	}
	return nil
}

// exists reports whether kind knows the cluster.
func (e *engine) exists(name string) (bool, error) {
	names, err := e.kind.List()
	if err != nil {
		return false, fmt.Errorf("list kind clusters: %w", err)
	}
	return slices.Contains(names, kindName(name)), nil
}

// container is what Status needs of a node container.
type container struct {
	Name    string
	Running bool
	PID     int
	Status  string
	Created time.Time
}

// inspect reads the state of node containers through the engine's CLI
// (kind's library does not expose it).
func (e *engine) inspect(ctx context.Context, names []string) ([]container, error) {
	if len(names) == 0 {
		return nil, nil
	}
	args := append([]string{"inspect", "--type", "container", "--format",
		"{{.Name}}|{{.State.Running}}|{{.State.Pid}}|{{.State.Status}}|{{.Created}}"}, names...)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s inspect: %w: %s", e.bin, err, strings.TrimSpace(stderr.String()))
	}
	var cs []container
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 5)
		if len(f) != 5 {
			continue
		}
		c := container{Name: strings.TrimPrefix(f[0], "/"), Running: f[1] == "true", Status: f[3]}
		fmt.Sscan(f[2], &c.PID)
		c.Created = parseCreated(f[4])
		cs = append(cs, c)
	}
	return cs, nil
}

// parseCreated reads Docker's RFC 3339 or Podman's Go time format.
func parseCreated(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999 -0700 MST"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
