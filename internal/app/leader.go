package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderOptions name the Lease that replicas of oplab's server elect the
// one doing the background work with (client-go's leader election).
type LeaderOptions struct {
	// Config reaches the cluster that holds the Lease.
	Config *rest.Config
	// Namespace and Name name the Lease.
	Namespace, Name string
	// Identity is this replica's name in the Lease; the host name (the
	// pod's name) with a random suffix when empty.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's; 15 s,
	// 10 s and 2 s when zero.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// LeaderLease makes LeaderOptions for the Lease "namespace/name" on the
// cluster oplab runs in (its pod's ServiceAccount), else the one $KUBECONFIG
// names.
func LeaderLease(lease string) (*LeaderOptions, error) {
	ns, name, ok := strings.Cut(lease, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("leader lease %q: want namespace/name", lease)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("leader lease: the cluster that holds it: %w", err)
	}
	return &LeaderOptions{Config: cfg, Namespace: ns, Name: name}, nil
}

func (o LeaderOptions) withDefaults() LeaderOptions {
	if o.Identity == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		o.Identity = host + "-" + hex.EncodeToString(b)
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = 10 * time.Second
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = 2 * time.Second
	}
	return o
}

// lead takes part in the election until Close: while this replica holds
// the Lease it repairs what a previous leader left and does the background
// work; when it loses the Lease it stops that work and stands by again.
func (r *Runtime) lead(ctx context.Context, o RuntimeOptions) error {
	lo := o.Leader.withDefaults()
	if lo.Config == nil || lo.Namespace == "" || lo.Name == "" {
		return errors.New("leader election: no cluster or Lease named")
	}
	cs, err := kubernetes.NewForConfig(lo.Config)
	if err != nil {
		return err
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: lo.Namespace, Name: lo.Name},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: lo.Identity},
		},
		LeaseDuration:   lo.LeaseDuration,
		RenewDeadline:   lo.RenewDeadline,
		RetryPeriod:     lo.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            lo.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				r.log.Info("leading: doing the background work", "lease", lo.Namespace+"/"+lo.Name, "identity", lo.Identity)
				if rep, err := r.a.Recover(lctx); err != nil {
					r.log.Warn("recover sessions", "err", err)
				} else if n := len(rep.Failed) + len(rep.Deleted); n > 0 {
					r.log.Info("recovered sessions", "failed", rep.Failed, "clusters deleted", rep.Deleted)
				}
				b := r.startBackground(lctx, o)
				<-lctx.Done()
				r.stopBackground(b)
			},
			OnStoppedLeading: func() {
				r.log.Info("not leading: standing by", "lease", lo.Namespace+"/"+lo.Name, "identity", lo.Identity)
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	ctx, r.stopLeading = context.WithCancel(ctx)
	r.leadingDone = make(chan struct{})
	go func() {
		defer close(r.leadingDone)
		// Run returns when the Lease is lost; stand by for it again.
		for ctx.Err() == nil {
			le.Run(ctx)
		}
		// The work of the last term stops with it.
		r.stopBackground(nil)
	}()
	return nil
}
