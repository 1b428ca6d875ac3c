// Command kube-controlplane runs kube-apiserver, kube-controller-manager,
// kube-scheduler and KWOK in one process: an embedded cluster's control plane
// beside its etcd.
//
// Run as separate programs, each loads its own copy of client-go, the API
// types and the Go runtime, and most of a component's resident memory is that
// code: 50-80 MiB each, of which little is shared in the per-process sums
// that RSS reports. One process keeps one copy. Each component keeps its own
// flags, its own secure port and its own health endpoint; when any of them
// stops, the process exits, so the cluster is reported degraded.
//
// Usage, one group of arguments per component, groups separated by "---":
//
//	kube-controlplane kube-apiserver FLAGS... --- kube-controller-manager FLAGS... --- kube-scheduler FLAGS... --- kwok FLAGS...
//
// The groups start in order. A component that has a readiness check (the
// API server) is started and waited for before the next group is prepared,
// since the API server's clients read its configuration while they start.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/version"
	"k8s.io/klog/v2"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	cmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	cmoptions "k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedoptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokconsts "sigs.k8s.io/kwok/pkg/consts"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
)

// stopProfile ends the start-up CPU profile, if one is being taken.
var stopProfile = func() {}

// separator divides the argument groups of the components.
const separator = "---"

// component is one prepared component.
type component struct {
	// run blocks until the component stops or ctx ends.
	run func() error
	// ready, when set, returns once the component serves.
	ready func(ctx context.Context) error
}

// prepare turns a component's flags into a prepared component.
type prepare func(ctx context.Context, args []string) (component, error)

var components = map[string]prepare{
	"kube-apiserver":          apiserver,
	"kube-controller-manager": controllerManager,
	"kube-scheduler":          scheduler,
	"kwok":                    kwok,
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Printf("kube-controlplane: Kubernetes %s, kwok version %s\n", version.Get().GitVersion, kwokconsts.Version)
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kube-controlplane:", err)
		klog.Flush()
		os.Exit(1)
	}
}

func run(args []string) error {
	groups, err := split(args)
	if err != nil {
		return err
	}
	// Logging is configured once for the process.
	if err := logsapi.ValidateAndApply(logs.NewOptions(), utilfeature.DefaultFeatureGate); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// KUBE_CONTROLPLANE_CPUPROFILE names a file for a CPU profile of the
	// start-up, from here until the last component is started: where a
	// cluster's start-up time goes. The embedded provider passes its
	// processes a minimal environment, so set it when running
	// kube-controlplane by hand with a cluster's arguments.
	if path := os.Getenv("KUBE_CONTROLPLANE_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		stopProfile = sync.OnceFunc(func() {
			pprof.StopCPUProfile()
			f.Close()
		})
		defer stopProfile()
	}

	endStartupGC, err := startupGC(os.Getenv("KUBE_CONTROLPLANE_STARTUP_GOGC"))
	if err != nil {
		return err
	}

	stopped := make(chan error, len(groups))
	for _, g := range groups {
		c, err := components[g.name](ctx, g.args)
		if err != nil {
			return fmt.Errorf("%s: %w", g.name, err)
		}
		go func() {
			err := c.run()
			if err == nil {
				err = errors.New("stopped")
			}
			stopped <- fmt.Errorf("%s: %w", g.name, err)
		}()
		if c.ready == nil {
			continue
		}
		readyCtx, cancel := context.WithCancelCause(ctx)
		go func() {
			select {
			case err := <-stopped:
				cancel(err)
			case <-readyCtx.Done():
			}
		}()
		err = c.ready(readyCtx)
		cancel(nil)
		if err != nil {
			if cause := context.Cause(readyCtx); cause != nil && !errors.Is(cause, context.Canceled) {
				return cause
			}
			return fmt.Errorf("%s: %w", g.name, err)
		}
	}
	stopProfile()
	time.AfterFunc(startupSettle, endStartupGC)
	select {
	case <-ctx.Done():
		klog.InfoS("Stopping on signal")
		klog.Flush()
		return nil
	case err := <-stopped:
		return err
	}
}

// startupSettle is how long after the last component has started the
// start-up collector setting ends.
const startupSettle = 5 * time.Second

// startupGC applies KUBE_CONTROLPLANE_STARTUP_GOGC, a GOGC value for the
// start-up alone, when set, and returns the function that restores the
// process's GOGC and returns the start-up garbage to the system.
//
// While the components start they allocate a few hundred MiB of short-lived
// data (API resource tables, OpenAPI specs, the first LISTs); with the GOGC
// of an idle cluster the collector runs again and again on the cores the
// start-up itself needs.
func startupGC(value string) (end func(), err error) {
	if value == "" {
		return func() {}, nil
	}
	percent, err := strconv.Atoi(value)
	if err != nil || percent <= 0 {
		return nil, fmt.Errorf("KUBE_CONTROLPLANE_STARTUP_GOGC=%q: want a positive percentage", value)
	}
	old := debug.SetGCPercent(percent)
	return func() {
		debug.SetGCPercent(old)
		debug.FreeOSMemory()
		klog.InfoS("Start-up over: garbage collector back to its configured GOGC", "GOGC", old)
	}, nil
}

type group struct {
	name string
	args []string
}

// split cuts args into one group per component.
func split(args []string) ([]group, error) {
	var out []group
	seen := map[string]bool{}
	for len(args) > 0 {
		end := len(args)
		for i, a := range args {
			if a == separator {
				end = i
				break
			}
		}
		g := args[:end]
		args = args[min(end+1, len(args)):]
		if len(g) == 0 {
			return nil, errors.New("empty argument group")
		}
		if _, ok := components[g[0]]; !ok {
			return nil, fmt.Errorf("unknown component %q (known: kube-apiserver, kube-controller-manager, kube-scheduler, kwok)", g[0])
		}
		if seen[g[0]] {
			return nil, fmt.Errorf("component %q given twice", g[0])
		}
		seen[g[0]] = true
		out = append(out, group{name: g[0], args: g[1:]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("usage: kube-controlplane COMPONENT FLAGS... [%s COMPONENT FLAGS...]", separator)
	}
	return out, nil
}

// parse parses args into the named flag sets of one component.
func parse(name string, sets map[string]*pflag.FlagSet, args []string) error {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	for _, f := range sets {
		fs.AddFlagSet(f)
	}
	return fs.Parse(args)
}

// apiserver does what kube-apiserver's command does, minus the process-wide
// set-up (logging, signals) done once in run.
func apiserver(ctx context.Context, args []string) (component, error) {
	s := apiserveroptions.NewServerRunOptions()
	registerConflictWindow(s)
	if err := parse("kube-apiserver", s.Flags().FlagSets, args); err != nil {
		return component{}, err
	}
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return component{}, err
	}
	completed, err := s.Complete(ctx)
	if err != nil {
		return component{}, err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return component{}, utilerrors.NewAggregate(errs)
	}
	addr := net.JoinHostPort(s.SecureServing.BindAddress.String(), strconv.Itoa(s.SecureServing.BindPort))
	return component{
		run:   func() error { return runAPIServer(ctx, completed) },
		ready: func(ctx context.Context) error { return waitReady(ctx, "https://"+addr+"/readyz") },
	}, nil
}

// runAPIServer is kube-apiserver's app.Run with its two bootstrap hooks
// replaced (see bootstrap.go).
func runAPIServer(ctx context.Context, opts apiserveroptions.CompletedOptions) error {
	config, err := apiserverapp.NewConfig(opts)
	if err != nil {
		return err
	}
	if err := replaceBootstrapHooks(config.KubeAPIs.ControlPlane.Generic, os.Getenv(seededVar) == "1"); err != nil {
		return err
	}
	completed, err := config.Complete()
	if err != nil {
		return err
	}
	server, err := apiserverapp.CreateServerChain(completed)
	if err != nil {
		return err
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return err
	}
	return prepared.Run(ctx)
}

// waitReady polls url until it answers 200. It is the process probing its
// own listener on loopback, so the serving certificate is not verified.
func waitReady(ctx context.Context, url string) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer client.CloseIdleConnections()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// controllerManager does what kube-controller-manager's command does, minus
// the process-wide set-up.
func controllerManager(ctx context.Context, args []string) (component, error) {
	s, err := cmoptions.NewKubeControllerManagerOptions()
	if err != nil {
		return component{}, err
	}
	known, disabled, aliases := cmapp.KnownControllers(), cmapp.ControllersDisabledByDefault(), cmapp.ControllerAliases()
	nfs := s.Flags(known, disabled, aliases)
	s.ParsedFlags = &nfs
	if err := parse("kube-controller-manager", nfs.FlagSets, args); err != nil {
		return component{}, err
	}
	if err := s.ComponentGlobalsRegistry.Set(); err != nil {
		return component{}, err
	}
	c, err := s.Config(ctx, known, disabled, aliases)
	if err != nil {
		return component{}, err
	}
	cc := c.Complete()
	return component{run: func() error { return cmapp.Run(ctx, cc) }}, nil
}

// scheduler does what kube-scheduler's command does, minus the process-wide
// set-up.
func scheduler(ctx context.Context, args []string) (component, error) {
	opts := schedoptions.NewOptions()
	if err := parse("kube-scheduler", opts.Flags.FlagSets, args); err != nil {
		return component{}, err
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return component{}, err
	}
	cc, sched, err := schedapp.Setup(ctx, opts)
	if err != nil {
		return component{}, err
	}
	return component{run: func() error { return schedapp.Run(ctx, cc, sched) }}, nil
}

// kwok does what kwok's main does. KWOK reads its --config flag from
// os.Args, so os.Args holds KWOK's own arguments while it loads them.
func kwok(ctx context.Context, args []string) (component, error) {
	saved := os.Args
	os.Args = append([]string{"kwok"}, args...)
	defer func() { os.Args = saved }()

	flags := pflag.NewFlagSet("kwok", pflag.ContinueOnError)
	flags.ParseErrorsAllowlist.UnknownFlags = true
	flags.Usage = func() {}
	ctx, _ = kwoklog.InitFlags(ctx, flags)
	ctx, err := kwokconfig.InitFlags(ctx, flags)
	if err != nil {
		return component{}, fmt.Errorf("load configuration: %w", err)
	}
	cmd := kwokcmd.NewCommand(ctx)
	// cobra merges pflag.CommandLine into every command, and there
	// Kubernetes' verflag already defines --version with another type.
	cmd.Version = ""
	cmd.PersistentFlags().AddFlagSet(flags)
	cmd.SetArgs(args)
	return component{run: func() error {
		if err := releasePredecessorLeases(ctx, args); err != nil {
			// KWOK still takes its nodes over, once their leases expire.
			klog.ErrorS(err, "Could not release the node leases a previous KWOK held")
		}
		return cmd.ExecuteContext(ctx)
	}}, nil
}
