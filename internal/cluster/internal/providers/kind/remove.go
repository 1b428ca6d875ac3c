package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrStuck is returned (wrapped) by Delete when a node container could not
// be removed within removeBudget; the message says what holds it: which
// cgroups are frozen and which processes are left, with their commands.
var ErrStuck = errors.New("node container cannot be removed")

// Removal budget. The engine needs about 12 s to give up killing a node
// whose processes cannot die, so the budget allows several attempts and
// still ends well inside a session stop's two minutes.
const (
	removeBudget = 90 * time.Second
	retryPause   = time.Second
	// stuckWait bounds reading what is stuck once the budget is spent.
	stuckWait = 20 * time.Second
)

// nodeOps is what removeNodes needs of the engine and the host.
type nodeOps interface {
	// remove removes the node containers still there; nil once none is.
	remove(ctx context.Context) error
	// thaw thaws every frozen cgroup of the node containers still there
	// and returns those it found, each with its error if it stayed frozen.
	thaw(ctx context.Context) []frozenCgroup
	// stuck says, a line each, what holds the node containers still there.
	stuck(ctx context.Context) []string
}

// removeNodes removes a cluster's node containers. Frozen cgroups of the
// nodes are thawed before the first attempt (a frozen one costs the
// engine's kill timeout and then fails) and again after each failed one,
// until the containers are gone or budget is spent; onThaw is told of each
// frozen cgroup found. A failure wraps ErrStuck and says what is stuck.
func removeNodes(ctx context.Context, ops nodeOps, budget time.Duration, onThaw func(frozenCgroup)) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	start := time.Now()
	thawed := 0
	thaw := func() {
		for _, f := range ops.thaw(ctx) {
			onThaw(f)
			if f.Err == nil {
				thawed++
			}
		}
	}
	thaw()
	var last error
	attempts := 0
	for {
		attempts++
		err := ops.remove(ctx)
		if err == nil {
			return nil
		}
		// The engine's own message says more than the deadline that cut
		// a later attempt short.
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryPause):
			thaw()
		}
		if ctx.Err() != nil {
			break
		}
	}
	if parent.Err() != nil { // the caller gave up: nothing is known to be stuck
		return fmt.Errorf("node containers not removed after %d attempts: %w (the last: %w)", attempts, parent.Err(), last)
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(parent), stuckWait)
	defer scancel()
	what := ops.stuck(sctx)
	if len(what) == 0 {
		what = []string{"nothing frozen or left running was found"}
	}
	return fmt.Errorf("%w after %d attempts in %s (frozen cgroups thawed: %d): %w; what holds it:\n  %s",
		ErrStuck, attempts, time.Since(start).Round(time.Second), thawed, last, strings.Join(what, "\n  "))
}

// engineNodes are the node containers of one kind cluster on the engine.
type engineNodes struct {
	e       *engine
	cluster string    // kind's name, "oplab-<name>"
	cg      *cgroupFS // nil where the host's cgroup mounts could not be read
	cgErr   error     // why cg is nil
}

var _ nodeOps = (*engineNodes)(nil)

// nodeContainer is a node container as the engine reports it.
type nodeContainer struct {
	Name string
	ID   string
	PID  int // its init, 0 when not running
}

// containers lists the cluster's node containers that still exist.
func (n *engineNodes) containers(ctx context.Context) ([]nodeContainer, error) {
	nodes, err := n.e.kind.ListNodes(n.cluster)
	if err != nil {
		return nil, fmt.Errorf("list the nodes of %q: %w", n.cluster, err)
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	args := []string{"inspect", "--type", "container", "--format", "{{.Name}}|{{.Id}}|{{.State.Pid}}"}
	for _, node := range nodes {
		args = append(args, node.String())
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, n.e.bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var cs []nodeContainer
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			continue
		}
		pid, _ := strconv.Atoi(f[2])
		cs = append(cs, nodeContainer{Name: strings.TrimPrefix(f[0], "/"), ID: f[1], PID: pid})
	}
	// A node removed between the listing and inspect is not an error.
	if err != nil && len(cs) == 0 && !strings.Contains(stderr.String(), "No such") {
		return nil, fmt.Errorf("%s inspect: %w: %s", n.e.bin, err, strings.TrimSpace(stderr.String()))
	}
	return cs, nil
}

// remove is `docker rm -f -v` of the nodes still there, as kind's own
// delete does it, but with the engine's message kept.
func (n *engineNodes) remove(ctx context.Context) error {
	cs, err := n.containers(ctx)
	if err != nil || len(cs) == 0 {
		return err
	}
	args := []string{"rm", "-f", "-v"}
	for _, c := range cs {
		args = append(args, c.Name)
	}
	out, err := exec.CommandContext(ctx, n.e.bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s rm -f -v %s: %w: %s", n.e.bin, strings.Join(args[3:], " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (n *engineNodes) thaw(ctx context.Context) []frozenCgroup {
	if n.cg == nil {
		return nil
	}
	cs, _ := n.containers(ctx) // a failed listing shows again in remove
	var found []frozenCgroup
	for _, c := range cs {
		for _, dir := range n.cg.containerCgroups(c.ID, c.PID) {
			found = append(found, n.cg.thawTree(ctx, dir)...)
		}
	}
	return found
}

// Bounds of a stuck report, so an error stays readable.
const (
	maxStuckCgroups = 8
	maxStuckProcs   = 6
)

func (n *engineNodes) stuck(ctx context.Context) []string {
	cs, err := n.containers(ctx)
	if err != nil {
		return []string{err.Error()}
	}
	var lines []string
	for _, c := range cs {
		lines = append(lines, fmt.Sprintf("node container %s (%.12s, init pid %d):", c.Name, c.ID, c.PID))
		lines = append(lines, n.cgroupsOf(c)...)
	}
	return lines
}

// cgroupsOf says, indented a line each, what of c's cgroups is stuck.
func (n *engineNodes) cgroupsOf(c nodeContainer) []string {
	if n.cg == nil {
		return []string{fmt.Sprintf("  its cgroups cannot be read: %v", n.cgErr)}
	}
	dirs := n.cg.containerCgroups(c.ID, c.PID)
	if len(dirs) == 0 {
		return []string{"  no cgroup of it found"}
	}
	var frozen []frozenCgroup
	for _, dir := range dirs {
		frozen = append(frozen, n.cg.frozenIn(dir)...)
	}
	var lines []string
	for i, f := range frozen {
		if i == maxStuckCgroups {
			lines = append(lines, fmt.Sprintf("  and %d more frozen cgroups", len(frozen)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("  cgroup %s is %s (%s); processes: %s", f.Path, f.State, f.remedy(), listProcesses(f.Procs)))
	}
	if len(frozen) == 0 {
		for _, dir := range dirs {
			lines = append(lines, fmt.Sprintf("  nothing frozen; processes left in %s: %s", dir, listProcesses(n.cg.processesIn(dir))))
		}
	}
	return lines
}

func listProcesses(ps []process) string {
	if len(ps) == 0 {
		return "none"
	}
	var s []string
	for i, p := range ps {
		if i == maxStuckProcs {
			s = append(s, fmt.Sprintf("and %d more", len(ps)-i))
			break
		}
		s = append(s, p.String())
	}
	return strings.Join(s, "; ")
}

// removeNodes removes the node containers of cluster name, thawing what
// holds them, and logs each frozen cgroup it meets.
func (p *Provider) removeNodes(ctx context.Context, e *engine, name string) error {
	n := &engineNodes{e: e, cluster: kindName(name)}
	n.cg, n.cgErr = hostCgroups()
	return removeNodes(ctx, n, removeBudget, func(f frozenCgroup) {
		if f.Err != nil {
			p.logger.Warn("a frozen cgroup of a node container could not be thawed", "cluster", name,
				"cgroup", f.Path, "state", f.State, "processes", listProcesses(f.Procs), "error", f.Err)
			return
		}
		p.logger.Warn("thawed a frozen cgroup of a node container so it can be removed", "cluster", name,
			"cgroup", f.Path, "state", f.State, "processes", listProcesses(f.Procs))
	})
}
