package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// Freeze stops every process of the cluster from running — etcd,
// kube-controlplane, the operator, the console's commands — by freezing
// the cell's control group: they use no CPU and keep their memory, and Thaw
// lets them go on where they stopped. A cluster without a group cannot be
// frozen (providers.ErrUnsupported).
//
// Nothing in a frozen cluster sees the time pass, but what it reads of the
// time jumps when it thaws. The one controller that acts on such a jump,
// the node lifecycle controller (a node whose lease is older than its grace
// period is NotReady, and so are its pods), does not run here (tuning.go).
func (p *Provider) Freeze(ctx context.Context, name string) error {
	return p.freeze(name, true)
}

// Thaw lets the processes of a frozen cluster run again; see Freeze.
func (p *Provider) Thaw(ctx context.Context, name string) error {
	return p.freeze(name, false)
}

func (p *Provider) freeze(name string, frozen bool) error {
	st, _, unlock, err := p.lockedState(name)
	if err != nil {
		return err
	}
	defer unlock()
	g := st.Cell.group()
	if g == nil {
		return fmt.Errorf("%w: cluster %q has no control group to freeze", providers.ErrUnsupported, name)
	}
	if frozen {
		err = g.Freeze()
	} else {
		err = g.Thaw()
	}
	if err != nil {
		verb := "freeze"
		if !frozen {
			verb = "thaw"
		}
		return fmt.Errorf("%s cluster %q: %w", verb, name, err)
	}
	return nil
}

// thawed thaws the cell of st, if it has a group, so that its processes
// can take a signal: a process of a frozen group (on cgroup v1) does not
// act on any, SIGKILL included, until it thaws. A group that is gone has
// nothing to thaw.
func thawed(st *clusterState) error {
	g := st.Cell.group()
	if g == nil {
		return nil
	}
	if err := g.Thaw(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("thaw the cell before stopping it: %w", err)
	}
	return nil
}
