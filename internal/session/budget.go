package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/store"
)

// Budget is what a session's cluster takes of its share of the machine
// (package budget), and, when it has run into a bound, what happened and
// what the learner can do. Only the session's own cluster pays for what
// its learner makes: the rest of the class is not touched.
type Budget struct {
	cluster.Usage
	// Trouble is set when the cluster reached one of its bounds.
	Trouble *Trouble `json:"trouble,omitempty"`
}

// MarshalJSON writes the usage's fields and trouble side by side, as one
// object. Without it the usage's own MarshalJSON, promoted through the
// embedding, would write the usage alone and lose the trouble.
func (b Budget) MarshalJSON() ([]byte, error) {
	u, err := json.Marshal(b.Usage)
	if err != nil || b.Trouble == nil {
		return u, err
	}
	t, err := json.Marshal(b.Trouble)
	if err != nil {
		return nil, err
	}
	if len(u) < 2 || u[len(u)-1] != '}' {
		return nil, fmt.Errorf("a cluster's usage is not written as an object: %s", u)
	}
	out := append(u[:len(u)-1:len(u)-1], ',')
	if len(u) == 2 { // {}
		out = out[:1]
	}
	out = append(out, `"trouble":`...)
	return append(append(out, t...), '}'), nil
}

// Trouble is a bound a session's cluster ran into.
type Trouble struct {
	// Kind is one of the Trouble kinds below, for a front end to choose
	// its words and colour; Message says it in English.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Trouble kinds.
const (
	// TroubleMemory: the kernel killed a process of the cluster at the
	// cell's memory ceiling.
	TroubleMemory = "memory"
	// TroubleMemoryFull: the cluster's resident memory fills its ceiling,
	// so it crawls, and the kernel has not killed anything yet.
	TroubleMemoryFull = "memory-full"
	// TroubleStopped: a process of the cluster is gone for another reason.
	TroubleStopped = "stopped"
	// TroubleEtcd: etcd's database reached its quota and refuses writes.
	TroubleEtcd = "etcd"
	// TroubleDisk: the cluster's files passed their bound on disk.
	TroubleDisk = "disk"
	// TroubleTasks: the cell runs as many threads as it may.
	TroubleTasks = "tasks"
)

// budgetOf reads the budget of s's cluster; nil where the provider keeps
// none (kind, pods), the cluster is gone, or it sleeps stopped (nothing of
// it runs, and its cell's group is gone with its processes).
func (m *Manager) budgetOf(ctx context.Context, s *live) *Budget {
	if s.state() == Provisioning || s.rec.Cluster == "" || s.work.Asleep != nil && s.work.Asleep.Stopped {
		return nil
	}
	p, err := m.providerOf(s.rec.Provider)
	if err != nil {
		return nil
	}
	u, err := p.Usage(ctx, s.rec.Cluster)
	if err != nil {
		if !errors.Is(err, cluster.ErrUnsupported) && !errors.Is(err, cluster.ErrNotFound) {
			m.log.Warn("read a cluster's budget", "session", s.rec.ID, "err", err)
		}
		return nil
	}
	return &Budget{Usage: u, Trouble: m.holdFull(s.rec.ID, trouble(u), time.Now())}
}

// fullHold is how long a cluster seen memory-full stays so while nothing
// worse is seen. Its resident memory falls back under the line as soon as
// whatever pushed it pauses (the API server's garbage of the requests
// in flight is collected), and rises again at the next push: without the
// hold the learner's trouble line would flicker, and the Reset it offered
// a moment ago would be refused as having nothing to reset.
const fullHold = time.Minute

// fullSeen is when a session's cluster was last seen memory-full, and how.
type fullSeen struct {
	at time.Time
	t  *Trouble
}

// holdFull returns t, the trouble session id's cluster is in now, or, when
// there is none, the memory-full one it was in less than fullHold ago.
func (m *Manager) holdFull(id string, t *Trouble, now time.Time) *Trouble {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, f := range m.full {
		if now.Sub(f.at) >= fullHold {
			delete(m.full, k)
		}
	}
	switch {
	case t != nil && t.Kind == TroubleMemoryFull:
		m.full[id] = fullSeen{now, t}
	case t == nil:
		if f, ok := m.full[id]; ok {
			return f.t
		}
	}
	return t
}

// forgetFull forgets that session id's cluster was memory-full: it was made
// anew.
func (m *Manager) forgetFull(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.full, id)
}

// resetHint is how the learner gets a working cluster back.
const resetHint = "reset the exercise for a new cluster (what you made in it is gone)"

// fullPercent is how much of its ceiling a cell's resident memory takes
// when the cell counts as full. With no swap, what is left is page cache:
// the kernel drops the cluster's program text and reads it back at every
// turn, and the cluster crawls for minutes before it kills anything (a
// failover cell at 768 MiB: 712 MiB resident, 30,000 major faults, no
// kill after five minutes of a flood).
const fullPercent = 90

// trouble says which bound u ran into, the worst first; nil when none.
func trouble(u cluster.Usage) *Trouble {
	down := strings.Join(u.Down, ", ")
	switch {
	case u.OOMKills > 0:
		what := "stopped a process of it"
		if down != "" {
			what = "stopped " + down
		}
		return &Trouble{TroubleMemory, fmt.Sprintf(
			"Your cluster used all of its memory (%s) and the kernel %s. Only your cluster is affected. To go on, %s, or, if it still answers, delete what you made.",
			size(u.MemoryLimit), what, resetHint)}
	case u.MemoryLimit > 0 && u.Resident >= u.MemoryLimit/100*fullPercent:
		return &Trouble{TroubleMemoryFull, fmt.Sprintf(
			"Your cluster used all of its memory (%s): it answers slowly, if at all, and the kernel will stop a process of it. Only your cluster is affected. To go on, delete what you made, or %s.",
			size(u.MemoryLimit), resetHint)}
	case down != "":
		return &Trouble{TroubleStopped, fmt.Sprintf("Part of your cluster has stopped (%s). To go on, %s.", down, resetHint)}
	case u.EtcdQuota > 0 && u.Etcd >= u.EtcdQuota/100*95:
		return &Trouble{TroubleEtcd, fmt.Sprintf(
			"Your cluster's etcd is full (its quota is %s): the API server refuses new objects with \"database space exceeded\". Delete what you made — the space comes back within a minute — or %s.",
			size(u.EtcdQuota), resetHint)}
	case u.DiskLimit > 0 && u.Disk > u.DiskLimit:
		return &Trouble{TroubleDisk, fmt.Sprintf("Your cluster takes %s of the machine's disk, more than its %s. Delete what you made, or %s.",
			size(u.Disk), size(u.DiskLimit), resetHint)}
	case u.TasksLimit > 0 && u.Tasks >= u.TasksLimit:
		return &Trouble{TroubleTasks, fmt.Sprintf("Your cluster runs as many threads as it may (%d): it cannot start more. Delete what you made, or %s.",
			u.TasksLimit, resetHint)}
	}
	return nil
}

func size(n uint64) string { return budget.Bytes(int64(n)) }

// Maintain keeps the clusters of live sessions inside their bounds where
// the provider can without their learners (cluster.Provider.Maintain:
// etcd's space given back, components' logs cut): a server's
// housekeeping calls it.
func (m *Manager) Maintain(ctx context.Context) error {
	list, err := m.o.Store.Sessions(ctx, store.Filter{States: activeStates()})
	if err != nil {
		return err
	}
	var errs []error
	for _, rec := range list {
		if State(rec.State) == Provisioning || rec.Cluster == "" || asleepOf(rec.Data) != nil {
			continue // a sleeping cluster answers nothing, and grows nothing
		}
		p, err := m.providerOf(rec.Provider)
		if err != nil {
			continue
		}
		if err := p.Maintain(ctx, rec.Cluster); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
	}
	return errors.Join(errs...)
}
