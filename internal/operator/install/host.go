package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/release"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/operator/hostpod"
	"oplab.dev/oplab/internal/oplog"
)

// HostRunner runs programs beside a cluster and stops them with it;
// *cluster.Provider is one on backends with the HostProcesses capability.
type HostRunner interface {
	StartHostProcess(ctx context.Context, cluster string, spec cluster.HostProcess) error
	StopHostProcess(ctx context.Context, cluster, name string) error
	HostProgram(ctx context.Context, cluster, path string) (string, error)
}

// Host runs the operator as a host process, for clusters whose pods run no
// container. The chart is still installed: its Deployment's pod is simulated
// and the process plays it, with the pod's ServiceAccount and arguments.
type Host struct {
	// Runner starts and stops the process with the cluster Cluster.
	Runner  HostRunner
	Cluster string
	// Operator is the pg-operator binary; HostPod is the hostpod binary
	// that runs it in step with its simulated pod and writes its output in
	// the CRI log format.
	Operator string
	HostPod  string
	// AdminKubeconfig is the cluster's admin kubeconfig, with which hostpod
	// watches the operator's pod (the operator's own rights may be taken
	// away in a lab).
	AdminKubeconfig string
	// Dir receives the operator's kubeconfig, token and log. It is made
	// private to the user; it belongs to the cluster and goes with it. On a
	// contained cluster it must be inside the cluster's directory (as
	// ForCluster makes it, beside the admin kubeconfig): the operator sees
	// no other.
	Dir string
	// TokenTTL is the lifetime asked for the ServiceAccount token;
	// DefaultTokenTTL when zero. hostpod mints a new token when four fifths
	// of it have passed; RefreshToken does it at once.
	TokenTTL time.Duration
	// Profiling makes the operator serve its profiles on a port of
	// loopback that the log names; ForCluster sets it when the cluster
	// serves its own (cluster.Provider.Profiling).
	Profiling bool
}

// DefaultTokenTTL is the lifetime asked for the operator's token.
const DefaultTokenTTL = 24 * time.Hour

// HostStatus describes the operator's host process.
type HostStatus struct {
	// LogPath is the operator's log in the CRI log format; the previous
	// run's log is beside it (PreviousLogPath).
	LogPath         string
	PreviousLogPath string
	// HealthAddr serves /healthz and /readyz; MetricsAddr serves /metrics.
	HealthAddr  string
	MetricsAddr string
	// Kubeconfig is the operator's kubeconfig (no secret inside: it names
	// the token file).
	Kubeconfig string
	// TokenExpires is when the operator's token ends.
	TokenExpires time.Time
}

func (h *Host) tokenTTL() time.Duration {
	if h.TokenTTL == 0 {
		return DefaultTokenTTL
	}
	return h.TokenTTL
}

// hostProcessName names the process for the runner.
const hostProcessName = "pg-operator"

// paths names the files in Dir; the operator's logs are where package oplog
// reads them.
func (h *Host) paths() (token, kubeconfig, log, previous, hostpodLog string) {
	loc := oplog.Location{Dir: h.Dir}
	return filepath.Join(h.Dir, "token"), filepath.Join(h.Dir, "kubeconfig"),
		loc.Log(), loc.Previous(), filepath.Join(h.Dir, "hostpod.log")
}

// startHost (re)starts the operator's host process for the release rel and
// waits until it is ready.
func (in *Installer) startHost(ctx context.Context, rel *release.Release) (*HostStatus, error) {
	h := in.opts.Host
	for _, p := range []string{h.Operator, h.HostPod, h.AdminKubeconfig} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("operator host process: %w (run make build)", err)
		}
	}
	if err := os.MkdirAll(h.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("operator host directory: %w", err)
	}
	if err := os.Chmod(h.Dir, 0o700); err != nil {
		return nil, err
	}
	// A contained cluster runs only programs it can see.
	hostpodPath, err := h.Runner.HostProgram(ctx, h.Cluster, h.HostPod)
	if err != nil {
		return nil, fmt.Errorf("operator host process: %w", err)
	}
	operatorPath, err := h.Runner.HostProgram(ctx, h.Cluster, h.Operator)
	if err != nil {
		return nil, fmt.Errorf("operator host process: %w", err)
	}
	tokenPath, kubeconfig, logPath, previous, hostpodLog := h.paths()
	cs, err := kubernetes.NewForConfig(in.cfg)
	if err != nil {
		return nil, err
	}
	expires, err := in.writeToken(ctx, cs)
	if err != nil {
		return nil, err
	}
	if err := hostpod.WriteTokenKubeconfig(kubeconfig, in.cfg, tokenPath, ServiceAccount, Namespace); err != nil {
		return nil, err
	}
	args, err := operatorArgs(rel.Manifest)
	if err != nil {
		return nil, err
	}
	health, metrics := freeAddr(), freeAddr()
	if health == "" || metrics == "" {
		return nil, errors.New("no free port on 127.0.0.1 for the operator's probes")
	}
	args = setFlag(args, "--health-probe-bind-address", health)
	args = setFlag(args, "--metrics-bind-address", metrics)
	// One host process plays the Deployment's single pod, and a new one
	// starts only after the previous one has stopped, so there is no other
	// replica to elect a leader against. Leader election renewed its Lease
	// every 2 s: 30 writes a minute through the API server into etcd, the
	// largest part of an idle session's CPU. The chart keeps its leader
	// election Role, so the operator's RBAC is what it is in a real cluster.
	args = setFlag(args, "--leader-elect", "false")
	expose := []string{health, metrics}
	if h.Profiling {
		if addr := freeAddr(); addr != "" {
			args = setFlag(args, "--pprof-bind-address", addr)
			expose = append(expose, addr)
			in.log.Info("operator serves profiles", "url", "http://"+addr+"/debug/pprof/")
		}
	}

	if err := in.applyClusterLogs(ctx, logPath, previous); err != nil {
		return nil, err
	}
	spec := cluster.HostProcess{
		Name: hostProcessName,
		Path: hostpodPath,
		Args: append([]string{
			"-kubeconfig", h.AdminKubeconfig,
			"-namespace", Namespace,
			"-selector", "app.kubernetes.io/name=pg-operator",
			"-log", logPath,
			"-previous-log", previous,
			"-token-file", tokenPath,
			"-service-account", ServiceAccount,
			"-token-ttl", h.tokenTTL().String(),
			"--", operatorPath,
		}, args...),
		Env: []string{
			"KUBECONFIG=" + kubeconfig,
			"POD_NAMESPACE=" + Namespace,
			"HOME=" + h.Dir,
			"PATH=/usr/local/bin:/usr/bin:/bin",
		},
		LogPath: hostpodLog,
		Expose:  ports(expose...),
	}
	in.log.Info("starting operator host process", "binary", h.Operator, "args", args, "log", logPath)
	// The runner stops a previous run of the same name first.
	if err := h.Runner.StartHostProcess(ctx, h.Cluster, spec); err != nil {
		return nil, fmt.Errorf("start operator host process: %w", err)
	}
	if err := waitReady(ctx, "http://"+health+"/readyz"); err != nil {
		return nil, fmt.Errorf("operator host process not ready: %w; its log ends:\n%s", err, tail(20, logPath, hostpodLog))
	}
	return &HostStatus{
		LogPath: logPath, PreviousLogPath: previous,
		HealthAddr: health, MetricsAddr: metrics,
		Kubeconfig: kubeconfig, TokenExpires: expires,
	}, nil
}

// stopHost stops the operator's host process and forgets its credentials.
func (in *Installer) stopHost(ctx context.Context) error {
	h := in.opts.Host
	if err := h.Runner.StopHostProcess(ctx, h.Cluster, hostProcessName); err != nil {
		return fmt.Errorf("stop operator host process: %w", err)
	}
	if err := in.deleteClusterLogs(ctx); err != nil {
		return err
	}
	token, kubeconfig, _, _, _ := h.paths()
	for _, p := range []string{token, kubeconfig} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// RefreshToken mints a new token for the operator's ServiceAccount and
// replaces the token file; the operator's client re-reads the file every
// minute, so no restart is needed. hostpod does this by itself before the
// token expires; RefreshToken is for when a token must be replaced now.
func (in *Installer) RefreshToken(ctx context.Context) (time.Time, error) {
	if in.opts.Host == nil {
		return time.Time{}, errors.New("refresh token: the operator does not run as a host process")
	}
	cs, err := kubernetes.NewForConfig(in.cfg)
	if err != nil {
		return time.Time{}, err
	}
	return in.writeToken(ctx, cs)
}

// writeToken mints a token for the chart's ServiceAccount with TokenRequest
// and writes it, private, to the token file. The token is never logged.
func (in *Installer) writeToken(ctx context.Context, cs kubernetes.Interface) (time.Time, error) {
	h := in.opts.Host
	secs := int64(h.tokenTTL() / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}},
		metav1.CreateOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("request a token for ServiceAccount %s/%s: %w", Namespace, ServiceAccount, err)
	}
	token, _, _, _, _ := h.paths()
	tmp := token + ".tmp"
	if err := os.WriteFile(tmp, []byte(tr.Status.Token), 0o600); err != nil {
		return time.Time{}, fmt.Errorf("write operator token: %w", err)
	}
	if err := os.Rename(tmp, token); err != nil {
		return time.Time{}, fmt.Errorf("write operator token: %w", err)
	}
	in.log.Info("operator token minted", "serviceAccount", Namespace+"/"+ServiceAccount, "expires", tr.Status.ExpirationTimestamp.Time)
	return tr.Status.ExpirationTimestamp.Time, nil
}

// operatorArgs reads the operator container's arguments from the rendered
// Deployment, so the host process runs exactly as the pod would.
func operatorArgs(manifest string) ([]string, error) {
	objs, err := splitManifest(manifest)
	if err != nil {
		return nil, err
	}
	for _, m := range objs {
		if m.Kind != "Deployment" || m.Name != Deployment {
			continue
		}
		ctrs, _ := field(m.Object, "spec", "template", "spec", "containers").([]any)
		for _, c := range ctrs {
			if field(c, "name") != Container {
				continue
			}
			var args []string
			for _, a := range asSlice(field(c, "args")) {
				s, ok := a.(string)
				if !ok {
					return nil, fmt.Errorf("operator argument %v is not a string", a)
				}
				args = append(args, s)
			}
			return args, nil
		}
	}
	return nil, fmt.Errorf("release has no Deployment %s with a container %s", Deployment, Container)
}

// setFlag replaces (or adds) --name=value in args.
func setFlag(args []string, name, value string) []string {
	out := make([]string, 0, len(args)+1)
	for _, a := range args {
		if a != name && !strings.HasPrefix(a, name+"=") {
			out = append(out, a)
		}
	}
	return append(out, name+"="+value)
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer l.Close()
	return l.Addr().String()
}

func waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err
			return false, nil
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("%s: %s", url, resp.Status)
			return false, nil
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %w)", err, last)
	}
	return err
}

// tail returns the last n lines of the given files, for error messages.
func tail(n int, paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "==> %s <==\n%s\n", p, strings.Join(lines, "\n"))
	}
	return b.String()
}

// KWOK serves the logs of simulated pods from host files named by its
// ClusterLogs objects.
var clusterLogsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}

const clusterLogsName = "oplab-pg-operator"

// applyClusterLogs tells KWOK to serve the operator pod's log (any pod of the
// namespace, so it survives the pod's re-creation) from logPath.
func (in *Installer) applyClusterLogs(ctx context.Context, logPath, previous string) error {
	dyn, err := dynamic.NewForConfig(in.cfg)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "ClusterLogs",
		"metadata":   map[string]any{"name": clusterLogsName},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{Namespace}},
			"logs": []any{map[string]any{
				"containers":       []any{Container},
				"logsFile":         logPath,
				"previousLogsFile": previous,
				"follow":           true,
			}},
		},
	}}
	_, err = dyn.Resource(clusterLogsGVR).Apply(ctx, clusterLogsName, obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return fmt.Errorf("serve the operator's log as its pod's: KWOK's ClusterLogs resource is not installed in this cluster: %w", err)
		}
		return fmt.Errorf("apply ClusterLogs %s: %w", clusterLogsName, err)
	}
	return nil
}

func (in *Installer) deleteClusterLogs(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(in.cfg)
	if err != nil {
		return err
	}
	err = dyn.Resource(clusterLogsGVR).Delete(ctx, clusterLogsName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return fmt.Errorf("delete ClusterLogs %s: %w", clusterLogsName, err)
	}
	return nil
}

// ports returns the port numbers of host:port addresses, for the runner
// to forward into a contained cluster.
func ports(addrs ...string) []int {
	var out []int
	for _, a := range addrs {
		if _, p, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
