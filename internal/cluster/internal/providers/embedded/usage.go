package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/internal/providers"
	"oplab.dev/oplab/internal/jsonconv"
)

var _ providers.Budgeted = (*Provider)(nil)

// etcdDB is etcd's database file under its data directory.
func (l layout) etcdDB() string { return filepath.Join(l.etcdDir(), "member", "snap", "db") }

// Usage reports what the cluster takes of its budget: its control group's
// counters, etcd's database and the cluster directory's size on disk, and
// which of its processes are gone. It reads files only.
func (p *Provider) Usage(ctx context.Context, name string) (providers.Usage, error) {
	if err := checkName(name); err != nil {
		return providers.Usage{}, err
	}
	l := layout{p.clusterDir(name)}
	st, err := readState(l.dir)
	if err != nil {
		if isNotExist(err) {
			return providers.Usage{}, fmt.Errorf("%w: %q", providers.ErrNotFound, name)
		}
		return providers.Usage{}, err
	}
	b := p.budgetOf(st)
	u := providers.Usage{DiskLimit: uint64(b.Disk), EtcdQuota: uint64(b.Etcd)}
	if g := st.Cell.group(); g != nil {
		gu, err := g.Usage()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return providers.Usage{}, fmt.Errorf("read the budget of %s: %w", name, err)
		}
		u.Memory, u.MemoryPeak, u.MemoryLimit, u.Resident = gu.Memory, gu.MemoryPeak, gu.MemoryLimit, gu.Resident
		u.OOMKills, u.ConsoleOOMKills = gu.OOMKills, gu.ConsoleOOMKills
		u.Tasks, u.TasksLimit, u.CPU = gu.Tasks, gu.TasksLimit, jsonconv.Duration(gu.CPU)
		u.CPULimit = gu.CPULimit
	}
	if fi, err := os.Stat(l.etcdDB()); err == nil {
		u.Etcd = uint64(fi.Size())
	}
	user := -1
	if st.Cell != nil && st.Cell.User != 0 {
		user = st.Cell.User
	}
	u.Disk = diskUsage(l.dir, user)
	seen := map[int]bool{}
	for _, rec := range st.Processes {
		if seen[rec.PID] {
			continue
		}
		seen[rec.PID] = true
		if !p.reaper.alive(rec.PID, l.dir) {
			u.Down = append(u.Down, rec.process())
		}
	}
	return u, nil
}

// diskUsage is what the files under dir take on disk: their allocated
// blocks, so a preallocated log segment counts whole, and each file once
// however many links it has. Where the cell runs as host user cellUser
// (-1: it does not), a file linked elsewhere that is not that user's is
// the host's, shared read-only (Share), and is not the cluster's to pay.
func diskUsage(dir string, cellUser int) uint64 {
	var n uint64
	counted := map[uint64]bool{}
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone meanwhile, or the cell's own
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			if counted[st.Ino] || cellUser >= 0 && int(st.Uid) != cellUser {
				return nil
			}
			counted[st.Ino] = true
		}
		n += uint64(st.Blocks) * 512
		return nil
	})
	return n
}

// Budget returns every new cell's budget, and whether cells get one here.
func (p *Provider) Budget() (budget.Budget, bool) { return p.budget, p.tree != nil }

// ConsoleGroup returns the cgroup.procs files of the cluster's console
// leaf, nil when the cluster has no group.
func (p *Provider) ConsoleGroup(name string) []string {
	if checkName(name) != nil {
		return nil
	}
	st, err := readState(p.clusterDir(name))
	if err != nil {
		return nil
	}
	if g := st.Cell.group(); g != nil {
		return g.Procs(budget.LeafConsole)
	}
	return nil
}

// Logs of the cluster's processes are cut to logKeep once they pass
// logBound: a learner can make a component log a line per request.
const (
	logBound = 16 << 20
	logKeep  = 1 << 20
)

// Maintain keeps the cluster inside its bounds: components' logs cut to
// their bound, etcd's free pages given back once compaction has freed
// half of its database, and etcd's "database space exceeded" alarm lifted
// once the learner's deletions left room under the quota.
func (p *Provider) Maintain(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	l := layout{p.clusterDir(name)}
	st, err := readState(l.dir)
	if err != nil {
		if isNotExist(err) {
			return fmt.Errorf("%w: %q", providers.ErrNotFound, name)
		}
		return err
	}
	var errs []error
	since := st.Created
	if !st.UnsettledAt.IsZero() {
		since = st.UnsettledAt
	}
	if st.Unsettled && time.Since(since) > settleAfter {
		p.logger.Info("settling a cluster its maker left without its CPU cap", "cluster", name)
		if err := p.Settle(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	entries, _ := os.ReadDir(l.logDir())
	for _, e := range entries {
		if err := cutLog(filepath.Join(l.logDir(), e.Name()), logBound, logKeep); err != nil {
			errs = append(errs, err)
		}
	}
	if !st.Ready {
		return errors.Join(errs...)
	}
	hc, err := healthClient(&pki{dir: l.pkiDir()})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer hc.CloseIdleConnections()
	e := etcdAdmin{c: hc, url: url(st.Ports.EtcdClient, "")}
	if err := e.maintain(ctx, uint64(p.budgetOf(st).Etcd)); err != nil {
		errs = append(errs, fmt.Errorf("etcd of %s: %w", name, err))
	}
	return errors.Join(errs...)
}

// cutLog keeps the last keep bytes of the log at path once it is longer
// than bound. The writer appends (O_APPEND), so its next line lands at the
// new end.
func cutLog(path string, bound, keep int64) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= bound || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	tail := make([]byte, keep)
	n, err := f.ReadAt(tail, fi.Size()-keep)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	tail = tail[:n]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:] // from a whole line
	}
	note := fmt.Sprintf("[oplab: %d bytes of this log were cut, to keep it under %d MiB]\n", fi.Size()-int64(len(tail)), bound>>20)
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append([]byte(note), tail...), 0)
	return err
}

// etcdAdmin is etcd's maintenance API through its JSON gateway, with the
// cluster's admin certificate (etcd trusts any certificate of the
// cluster's CA).
type etcdAdmin struct {
	c   *http.Client
	url string
}

func (e etcdAdmin) call(ctx context.Context, path string, in, out any) error {
	body, _ := json.Marshal(in)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c := *e.c
	c.Timeout = 0 // a defragmentation takes as long as it takes, within ctx
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// etcdStatus is what maintain reads of /v3/maintenance/status. The
// gateway writes 64-bit numbers as strings.
type etcdStatus struct {
	Header struct {
		MemberID string `json:"member_id"`
		Revision int64  `json:"revision,string"`
	} `json:"header"`
	DBSize      int64 `json:"dbSize,string"`
	DBSizeInUse int64 `json:"dbSizeInUse,string"`
}

// maintain defragments etcd when its free pages are over half of a
// database grown past half its quota. Under a NOSPACE alarm (the quota
// reached) it compacts the history to the current revision first — what
// the learner deleted then frees its pages — and lifts the alarm when the
// database, defragmented, is back under 90% of the quota: etcd's own
// recovery, done for the learner, who cannot reach etcd.
func (e etcdAdmin) maintain(ctx context.Context, quota uint64) error {
	var st etcdStatus
	if err := e.call(ctx, "/v3/maintenance/status", struct{}{}, &st); err != nil {
		return err
	}
	var alarms struct {
		Alarms []struct {
			Alarm string `json:"alarm"`
		} `json:"alarms"`
	}
	if err := e.call(ctx, "/v3/maintenance/alarm", map[string]string{"action": "GET"}, &alarms); err != nil {
		return err
	}
	nospace := false
	for _, a := range alarms.Alarms {
		nospace = nospace || a.Alarm == "NOSPACE"
	}
	if nospace {
		// Compacting to a revision already compacted is an error etcd
		// answers, not a failure of the maintenance.
		err := e.call(ctx, "/v3/kv/compaction", map[string]any{"revision": fmt.Sprint(st.Header.Revision), "physical": true}, nil)
		if err != nil && !bytes.Contains([]byte(err.Error()), []byte("compacted")) {
			return err
		}
		if err := e.call(ctx, "/v3/maintenance/status", struct{}{}, &st); err != nil {
			return err
		}
	}
	if uint64(st.DBSize) > quota/2 && st.DBSizeInUse < st.DBSize/2 || nospace && st.DBSizeInUse < st.DBSize {
		if err := e.call(ctx, "/v3/maintenance/defragment", struct{}{}, nil); err != nil {
			return err
		}
		if err := e.call(ctx, "/v3/maintenance/status", struct{}{}, &st); err != nil {
			return err
		}
	}
	if nospace && uint64(st.DBSize) < quota/10*9 {
		return e.call(ctx, "/v3/maintenance/alarm", map[string]string{"action": "DEACTIVATE", "memberID": st.Header.MemberID, "alarm": "NOSPACE"}, nil)
	}
	return nil
}

// settleAfter is how long a cluster made Unsettled may run without its CPU
// cap before Maintain caps it: far longer than a start and its lab's setup
// take, so that only a cluster whose maker is gone waits for it.
const settleAfter = 5 * time.Minute

// Settle caps the CPU of a cluster made Unsettled at its budget's; see
// providers.Budgeted. A new cluster's start-up and its lab's setup (the
// operator's install, the lab's objects made ready) are a few CPU-seconds
// at once, which admission bounds (a start a core); at the cap they take
// twice as long and, throttled, cost more CPU, not less.
func (p *Provider) Settle(ctx context.Context, name string) error {
	st, dir, unlock, err := p.lockedState(name)
	if err != nil {
		return err
	}
	defer unlock()
	if !st.Unsettled {
		return nil
	}
	if g := st.Cell.group(); g != nil {
		if err := g.SetCPU(p.budgetOf(st).CPU); err != nil {
			return fmt.Errorf("cap the CPU of cluster %q: %w", name, err)
		}
	}
	st.Unsettled, st.UnsettledAt = false, time.Time{}
	return writeState(dir, st)
}

// Unsettle lets a settled cluster run without its CPU cap until Settle;
// see providers.Budgeted. Maintain caps it again if Settle does not come
// within settleAfter.
func (p *Provider) Unsettle(ctx context.Context, name string) (bool, error) {
	st, dir, unlock, err := p.lockedState(name)
	if err != nil {
		return false, err
	}
	defer unlock()
	g := st.Cell.group()
	if g == nil || st.Unsettled {
		return false, nil
	}
	if err := g.SetCPU(0); err != nil {
		return false, fmt.Errorf("lift the CPU cap of cluster %q: %w", name, err)
	}
	st.Unsettled, st.UnsettledAt = true, time.Now()
	return true, writeState(dir, st)
}
