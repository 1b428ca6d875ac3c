package embedded

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/bwrap"
	"oplab.dev/oplab/internal/cell"
	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// Confinement says whether the provider runs each cluster in a cell of its
// own (package cell): namespaces in which nothing a learner makes the
// cluster do reaches the host's files, network or processes. It is
// bubblewrap's one Mode, as the web console's sandbox takes it too.
type Confinement = bwrap.Mode

const (
	// ConfineAuto makes cells where the machine can, and otherwise runs
	// clusters unconfined, saying why once (a single-user machine).
	ConfineAuto = bwrap.Auto
	// ConfineRequired makes New fail where cells cannot be made.
	ConfineRequired = bwrap.Required
	// ConfineOff never makes cells: the cluster's processes run with the
	// rights of oplab itself.
	ConfineOff = bwrap.Off
)

// cellBinary is the program that runs inside each cell; `make build` puts
// it beside oplab.
const cellBinary = "cell"

// cellRecord is what a later oplab needs to run more processes in a
// cluster's cell.
type cellRecord struct {
	// Holder is the bwrap that made the cell (also the first process
	// record, so it is stopped last); Init is the cell's PID 1, whose
	// namespaces a process joins.
	Holder int `json:"holder"`
	Init   int `json:"init"`
	// User is the host user the cell runs as, when oplab runs as root;
	// zero when the cell runs as oplab's own (unprivileged) user.
	User int `json:"user,omitempty"`
	// Group is the cell's control group (package budget); nil where none
	// could be made.
	Group *budget.Record `json:"group,omitempty"`
	// Sandbox is bubblewrap's path, which the cell sees at that path: a
	// learner's program runs in a sandbox of its own inside the cell
	// (Confine). Empty in a cell made before it did.
	Sandbox string `json:"sandbox,omitempty"`
}

// group returns the cell's control group, nil when it has none.
func (r *cellRecord) group() *budget.Group {
	if r == nil || r.Group == nil {
		return nil
	}
	return budget.Load(*r.Group)
}

// groupName is the name of the control group of the cluster in dir:
// its name, and a digest of its directory, which no other cluster of any
// data directory has.
func groupName(name, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// cellUserBase is where the host users of cells begin when oplab runs as
// root: a cell runs as cellUserBase plus its API server's port, which no
// other live cell has, so no two cells share a user. No distribution gives
// accounts ids in that range.
const cellUserBase = 200000

// cellUser is the host user a new cell whose API server listens on port
// runs as: a user of its own when oplab runs as root, oplab's otherwise.
func cellUser(port int) int {
	if os.Geteuid() != 0 {
		return 0
	}
	return cellUserBase + port
}

// hostFiles are the files of a cluster's directory that the host keeps for
// itself: a cell's user may neither read nor change them.
var hostFiles = []string{stateFile, ".lock", creatingLock}

// Limits of each process in a cell. The memory bound is on private
// writable memory (a Go heap): above it an allocation fails and the
// process dies, and only its own cluster with it.
var cellLimits = map[string]cell.Limits{
	etcdBinary:         {Files: 65536, Memory: 2 << 30},
	controlPlaneBinary: {Files: 65536, Memory: 4 << 30},
	"":                 {Files: 16384, Memory: 2 << 30}, // host processes (the operator)
}

// ErrNoCell is returned (wrapped) by New with ConfineRequired where cells
// cannot be made; its message says what is missing.
var ErrNoCell = errors.New("clusters cannot be contained on this machine")

// setupConfinement decides whether the provider's clusters run in cells,
// and whether their cells have budgets: a cell without a control group
// keeps the cluster off the machine's files and network, but not from
// taking all its memory and CPU.
func (p *Provider) setupConfinement(mode Confinement) error {
	if mode == ConfineOff {
		p.cellErr = errors.New("cells are turned off")
		return nil
	}
	err := cell.Probe(context.Background(), filepath.Join(p.binDir, cellBinary), cellUser(portLow))
	if err == nil {
		p.confined = true
		if path, perr := bwrap.Path(); perr == nil {
			p.sandbox = path
		}
		p.tree, err = budget.Open()
	}
	if err == nil {
		return nil
	}
	if mode == ConfineRequired {
		return fmt.Errorf("%w: %v", ErrNoCell, err)
	}
	p.cellErr = err
	if p.confined {
		p.logger.Warn("clusters run without a budget: one learner's cluster can take this machine's memory and CPU", "reason", err)
	} else {
		p.logger.Warn("clusters run unconfined: a learner's cluster can reach this machine's files and network", "reason", err)
	}
	return nil
}

// Contained reports whether new clusters run in cells with a budget each,
// and why not.
func (p *Provider) Contained() (bool, error) { return p.confined && p.tree != nil, p.cellErr }

// cellSpec is the cell of the cluster in dir, run as user: its own
// directory and the programs of the bin directory.
func (p *Provider) cellSpec(dir string, user int) cell.Spec {
	progs := []string{p.binDir}
	if p.sandbox != "" {
		progs = append(progs, p.sandbox)
	}
	return cell.Spec{
		Dir:      dir,
		Init:     filepath.Join(p.binDir, cellBinary),
		Programs: progs,
		User:     user,
		Keep:     hostFiles,
	}
}

// forwarded are the ports the host reaches in the cell: the API server's,
// and the health endpoints of the other components, which Status probes.
func (pt ports) forwarded() []int {
	return []int{pt.EtcdClient, pt.APIServer, pt.ControllerManager, pt.Scheduler, pt.Kwok}
}

// startCell makes the cluster's cell, its first process record.
func (c *creation) startCell(ctx context.Context) error {
	spec := c.p.cellSpec(c.l.dir, cellUser(c.st.Ports.APIServer))
	spec.Forwards = c.st.Ports.forwarded()
	c.st.Cell = &cellRecord{User: spec.User, Sandbox: c.p.sandbox}
	if c.p.tree != nil {
		g, err := c.p.tree.Make(groupName(c.st.Name, c.l.dir), c.p.budgetOf(c.st))
		if err != nil {
			return err
		}
		rec := g.Record()
		c.st.Cell.Group = &rec
		spec.Cgroup = g.Procs(budget.LeafCluster)
		// Recorded before anything runs in it, so a teardown removes it.
		if err := writeState(c.l.dir, c.st); err != nil {
			return err
		}
	}
	h, err := spec.Holder()
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return fmt.Errorf("make the cell: %w", err)
	}
	log := c.l.log(cellBinary)
	pid, err := c.p.reaper.start(h.Path, h.Args, c.p.env(c.l.dir, nil), c.l.dir, log, h.Unshareflags, h.ExtraFiles...)
	if err != nil {
		h.Close()
		return fmt.Errorf("make the cell: %w", err)
	}
	c.st.Processes = append(c.st.Processes, processRecord{Name: cellBinary, PID: pid, Log: log})
	c.st.Cell.Holder = pid
	if err := writeState(c.l.dir, c.st); err != nil {
		h.Close()
		return err
	}
	init, err := h.Started(10 * time.Second)
	if err != nil {
		return fmt.Errorf("make the cell: %w; last lines of %s:\n%s", err, log, logTail(log, 10))
	}
	c.st.Cell.Init = init
	if err := writeState(c.l.dir, c.st); err != nil {
		return err
	}
	if err := cell.WaitReady(ctx, c.l.dir, 10*time.Second); err != nil {
		return fmt.Errorf("%w; last lines of %s:\n%s", err, log, logTail(log, 10))
	}
	return nil
}

// command returns how to run prog with args for the cluster of st in dir:
// inside its cell when it has one, as it is otherwise.
func (p *Provider) command(st *clusterState, dir, limits, prog string, args []string) (string, []string, error) {
	if st.Cell == nil {
		return prog, args, nil
	}
	if !p.reaper.alive(st.Cell.Holder, dir) || !cell.InitAlive(st.Cell.Holder, st.Cell.Init) {
		return "", nil, fmt.Errorf("the cell of %s is not running", st.Name)
	}
	lim, ok := cellLimits[limits]
	if !ok {
		lim = cellLimits[""]
	}
	spec := p.cellSpec(dir, st.Cell.User)
	if g := st.Cell.group(); g != nil {
		spec.Cgroup = g.Procs(budget.LeafCluster)
	}
	// Files the host wrote since (a copied etcd seed, the operator's
	// token) become the cell's.
	if err := spec.Own(); err != nil {
		return "", nil, err
	}
	return cell.Join(spec, st.Cell.Init, lim, prog, args...)
}

// checkInCell refuses a program a cell cannot run: only the bin directory
// and the cluster's own directory are in a cell's file system.
func (p *Provider) checkInCell(st *clusterState, dir, prog string) error {
	if st.Cell == nil {
		return nil
	}
	if st.Cell.Sandbox != "" && prog == st.Cell.Sandbox {
		return nil
	}
	rel, err := filepath.Rel(p.binDir, prog)
	inBin := err == nil && rel != "." && !strings.HasPrefix(rel, "..")
	rel, err = filepath.Rel(dir, prog)
	inDir := err == nil && rel != "." && !strings.HasPrefix(rel, "..")
	if !inBin && !inDir {
		return fmt.Errorf("%s is neither in %s nor in the cluster's directory: a contained cluster cannot run it (see HostProgram)", prog, p.binDir)
	}
	if _, err := os.Stat(prog); err != nil {
		return err
	}
	return nil
}

// HostProgram returns path when the cluster's processes can run it (the
// cluster has no cell, or path is in the bin directory, which every cell
// sees); otherwise it copies the program into the cluster's directory and
// returns the copy's path. A copy, not a link: the cell may write to its
// own directory, and must not be able to change a program the host runs.
func (p *Provider) HostProgram(ctx context.Context, cluster, path string) (string, error) {
	st, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return "", err
	}
	defer unlock()
	if st.Cell == nil || p.checkInCell(st, dir, path) == nil {
		return path, nil
	}
	src, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	progs := filepath.Join(dir, "run", "programs")
	if err := os.MkdirAll(progs, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(progs, filepath.Base(path))
	if fi, err := os.Stat(dst); err == nil && fi.Size() == src.Size() && fi.ModTime().Equal(src.ModTime()) {
		return dst, nil
	}
	tmp := dst + ".new"
	os.Remove(tmp) // left by a copy that was interrupted
	if err := providers.CopyFile(path, tmp, 0o600); err != nil {
		return "", fmt.Errorf("copy %s into the cell: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o500); err != nil {
		return "", err
	}
	if err := os.Chtimes(tmp, src.ModTime(), src.ModTime()); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp, dst)
}

// leaf follows pid's only child down to the process that has none: the
// program that an nsenter runs in a cell, or a cell's first process under
// bwrap. A process with no child, or several, is its own leaf.
func leaf(pid int) int {
	for range 4 {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		if err != nil {
			return pid
		}
		f := strings.Fields(string(data))
		if len(f) != 1 {
			return pid
		}
		child, err := strconv.Atoi(f[0])
		if err != nil {
			return pid
		}
		pid = child
	}
	return pid
}
