package kind

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// Status reports the cluster's node containers and whether its API server
// answers /readyz.
func (p *Provider) Status(ctx context.Context, name string) (providers.Status, error) {
	if err := checkName(name); err != nil {
		return providers.Status{}, err
	}
	e, err := p.engine(ctx)
	if err != nil {
		return providers.Status{}, err
	}
	nodes, err := e.kind.ListNodes(kindName(name))
	if err != nil {
		return providers.Status{}, fmt.Errorf("list the nodes of %q: %w", kindName(name), err)
	}
	if len(nodes) == 0 {
		return providers.Status{}, fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.String()
	}
	cs, err := e.inspect(ctx, names)
	if err != nil {
		return providers.Status{}, err
	}
	st := providers.Status{Name: name, Provider: Name, Kubeconfig: p.kubeconfig(name)}
	healthy, detail := p.apiReady(ctx, name)
	if rc, err := clientcmd.BuildConfigFromFlags("", p.kubeconfig(name)); err == nil {
		st.Server = rc.Host
	}
	alive := 0
	for _, c := range cs {
		if st.Created.IsZero() || (!c.Created.IsZero() && c.Created.Before(st.Created)) {
			st.Created = c.Created
		}
		comp := providers.ComponentStatus{Name: "node " + c.Name, Process: e.bin + " container " + c.Name, PID: c.PID, Alive: c.Running, Detail: c.Status}
		if c.Running {
			alive++
			comp.Healthy = healthy
			if !healthy {
				comp.Detail = detail
			}
		}
		st.Components = append(st.Components, comp)
	}
	switch {
	case alive == 0:
		st.State = providers.StateStopped
	case alive == len(cs) && healthy:
		st.State = providers.StateRunning
	default:
		st.State = providers.StateDegraded
	}
	return st, nil
}

// apiReady asks the API server's /readyz with a short timeout.
func (p *Provider) apiReady(ctx context.Context, name string) (bool, string) {
	rc, err := clientcmd.BuildConfigFromFlags("", p.kubeconfig(name))
	if err != nil {
		return false, "no kubeconfig: " + err.Error()
	}
	rc.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return false, err.Error()
	}
	if err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return false, "API server not ready: " + err.Error()
	}
	return true, ""
}
