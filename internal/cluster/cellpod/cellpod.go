// Package cellpod is the main process of a learner's control-plane pod on
// the pods provider. The pod is the learner's cell: its own file system
// (an image with only oplab's programs, a volume for the cluster's state),
// its own network namespace, no Kubernetes credentials of the host cluster.
// Inside it, Run keeps one embedded cluster — etcd, kube-controlplane with
// KWOK — exactly as the embedded provider runs one on a laptop:
//
//   - on the pod's first start it creates the cluster in the volume;
//   - when the pod is replaced (deleted, evicted, its node drained) it starts
//     the same cluster again from the volume, with every object the learner
//     made;
//   - it forwards the pod's API port to the API server, which listens on the
//     pod's loopback, so the cluster's Service reaches it;
//   - on SIGTERM it stops the cluster in order (API server before etcd), so
//     etcd's data is closed cleanly before the pod goes.
package cellpod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	clientcmd "k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/operator/install"
)

// Options configure Run.
type Options struct {
	// Name is the cluster's name, the same as the pods provider's.
	Name string
	// DataDir is the pod's volume: the cluster's state lives under it.
	DataDir string
	// BinDir holds etcd and kube-controlplane.
	BinDir string
	// Listen is the address of the pod's API port ("0.0.0.0:6443"); it
	// listens only once the cluster is ready, so a TCP readiness probe on it
	// says when the control plane answers.
	Listen string
	// OperatorDir is the reference operator's directory (Operator).
	OperatorDir string
	Logger      *slog.Logger
}

func (o Options) provider() (*cluster.Provider, error) {
	return cluster.NewProvider(cluster.ProviderWithLogger(o.Logger), cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{
		BinDir: o.BinDir, DataDir: o.DataDir,
		// The seed is the pod's own: an image shared by every learner has
		// no writable cache.
		CacheDir: filepath.Join(o.DataDir, "cache"),
		// The pod is the cell.
		Confine: cluster.ConfineOff,
	}))
}

// Run brings the cluster up (made or started again), forwards Listen to its
// API server until ctx ends, then stops the cluster and keeps its state.
func Run(ctx context.Context, o Options) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	p, err := o.provider()
	if err != nil {
		return err
	}
	progress := cluster.CreateWithProgress(func(s cluster.Step) {
		switch {
		case !s.Done:
			o.Logger.Info(s.Name)
		case s.Err != nil:
			o.Logger.Error(s.Name, "err", s.Err, "took", s.Duration)
		default:
			o.Logger.Info(s.Name+": done", "took", s.Duration.Round(time.Millisecond))
		}
	})
	start := time.Now()
	if err := up(ctx, p, o.Name, progress, o.Logger); err != nil {
		return err
	}
	st, err := p.Status(ctx, o.Name)
	if err != nil {
		return err
	}
	u, err := url.Parse(st.Server)
	if err != nil {
		return fmt.Errorf("API server address %q: %w", st.Server, err)
	}
	o.Logger.Info("control plane ready", "cluster", o.Name, "took", time.Since(start).Round(time.Millisecond), "listen", o.Listen)
	ferr := forward(ctx, o.Listen, u.Host, o.Logger)
	// The pod ends: stop in order with time to spare before the kubelet's
	// SIGKILL (the pod's grace period is longer).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	return errors.Join(ferr, p.Stop(sctx, o.Name))
}

// up creates the cluster, or starts it again when the volume has it.
func up(ctx context.Context, p *cluster.Provider, name string, progress cluster.CreateOption, log *slog.Logger) error {
	st, err := p.Status(ctx, name)
	switch {
	case errors.Is(err, cluster.ErrNotFound):
		log.Info("creating the cluster", "cluster", name)
		return p.Create(ctx, name, progress)
	case err != nil:
		return err
	case st.State == cluster.StateAbandoned:
		// A create the previous pod did not finish: nothing to keep.
		log.Info("the previous create did not finish: creating the cluster again", "cluster", name)
		if err := p.Delete(ctx, name); err != nil && !errors.Is(err, cluster.ErrNotFound) {
			return err
		}
		return p.Create(ctx, name, progress)
	default:
		log.Info("starting the cluster again from its volume", "cluster", name, "state", st.State)
		// Whatever the previous pod left is gone with its PID namespace;
		// Stop clears the records.
		if err := p.Stop(ctx, name); err != nil {
			return err
		}
		return p.Start(ctx, name, progress)
	}
}

// forward accepts on listen and pipes each connection to target until ctx
// ends.
func forward(ctx context.Context, listen, target string, log *slog.Logger) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Go(func() {
			defer c.Close()
			var d net.Dialer
			t, err := d.DialContext(ctx, "tcp", target)
			if err != nil {
				log.Warn("API server unreachable", "err", err)
				return
			}
			defer t.Close()
			done := make(chan struct{}, 2)
			go func() { io.Copy(t, c); done <- struct{}{} }()
			go func() { io.Copy(c, t); done <- struct{}{} }()
			select {
			case <-done:
			case <-ctx.Done():
			}
		})
	}
}

// Kubeconfig writes the cluster's admin kubeconfig to w: the pods provider
// reads it once, by exec, when the cluster is first ready.
func Kubeconfig(o Options, w io.Writer) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p, err := o.provider()
	if err != nil {
		return err
	}
	path, err := p.KubeconfigPath(o.Name)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// Operator is the cell's second container: it waits for the control plane
// and then plays the reference operator's pod whenever the learner's
// cluster has one (see install.RunInCell), until ctx ends.
func Operator(ctx context.Context, o Options) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	p, err := o.provider()
	if err != nil {
		return err
	}
	// The first container makes the cluster; RunInCell then waits for the
	// kubeconfig to be written.
	var kc string
	for {
		if kc, err = p.KubeconfigPath(o.Name); err == nil {
			break
		}
		if !errors.Is(err, cluster.ErrNotFound) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	return install.RunInCell(ctx, install.CellRun{
		AdminKubeconfig: kc,
		Dir:             o.OperatorDir,
		Operator:        filepath.Join(o.BinDir, "pg-operator"),
		Logger:          o.Logger,
	})
}

// Console runs one command of the learner's web console in the cell (the
// far end of console.Remote; the pods provider runs it by exec in the
// cell's console container): argv is console.Call's form, kubectl is the
// image's, and the kubeconfig is the learner's own, given on stdin, pointed
// at the API server on the pod's loopback — the cell's admin credentials
// are never used. It returns the exit status to leave with.
func Console(ctx context.Context, o Options, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "cellpod console:", err)
		return 125
	}
	call, err := console.ParseCall(argv)
	if err != nil {
		return fail(err)
	}
	p, err := o.provider()
	if err != nil {
		return fail(err)
	}
	admin, err := p.KubeconfigPath(o.Name)
	if err != nil {
		return fail(fmt.Errorf("the cluster is not made yet: %w", err))
	}
	local, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		return fail(err)
	}
	return console.Serve(ctx, console.ServeOptions{
		Kubectl: filepath.Join(o.BinDir, "kubectl"), TempDir: os.TempDir(),
		Local: func(kc []byte) ([]byte, error) { return pointAt(kc, local) },
	}, call, stdin, stdout, stderr)
}

// pointAt makes every cluster of kubeconfig the API server of local (its
// current context's): its address on the pod's loopback and its CA. The
// users — the learner's credentials — stay as they are.
func pointAt(kubeconfig []byte, local *clientcmdapi.Config) ([]byte, error) {
	ctx, ok := local.Contexts[local.CurrentContext]
	if !ok || local.Clusters[ctx.Cluster] == nil {
		return nil, errors.New("the cell's kubeconfig names no cluster")
	}
	here := local.Clusters[ctx.Cluster]
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	if len(cfg.Clusters) == 0 {
		return nil, errors.New("it names no cluster")
	}
	for name, c := range cfg.Clusters {
		cfg.Clusters[name] = &clientcmdapi.Cluster{
			Server: here.Server, CertificateAuthorityData: here.CertificateAuthorityData,
			CertificateAuthority: here.CertificateAuthority, Extensions: c.Extensions,
		}
	}
	return clientcmd.Write(*cfg)
}

// Idle holds the cell's console container open until ctx ends: the
// learner's console commands run there by exec, within that container's
// own memory limit, so a heavy one cannot take the control plane's.
func Idle(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
