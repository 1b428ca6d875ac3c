// Command hostpod runs a program on the host in step with a simulated pod,
// as a kubelet runs a container, and writes the program's output in the CRI
// log format to the file KWOK serves as the pod's log. See package hostpod.
//
//	hostpod -kubeconfig ADMIN -namespace NS -selector SEL -log FILE [-previous-log FILE]
//	        [-token-file FILE -service-account NAME -token-ttl 24h] -- program [args...]
//
// With -token-file it also keeps the ServiceAccount token in FILE fresh, as a
// kubelet does for a pod's projected token. oplab runs the operator through it
// on the embedded provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/operator/hostpod"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostpod:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hostpod", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig to watch the pods with")
	namespace := fs.String("namespace", "", "namespace of the pod")
	selector := fs.String("selector", "", "label selector of the pod")
	logPath := fs.String("log", "", "file to write the program's output to, as CRI log lines")
	previous := fs.String("previous-log", "", "where the last run's log is moved at each start")
	tokenFile := fs.String("token-file", "", "keep a token of -service-account (in -namespace) fresh in this file")
	serviceAccount := fs.String("service-account", "", "the ServiceAccount whose token -token-file holds")
	tokenTTL := fs.Duration("token-ttl", 24*time.Hour, "lifetime asked for each token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *kubeconfig == "" || *namespace == "" || *selector == "" || *logPath == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: hostpod -kubeconfig F -namespace NS -selector SEL -log F [-previous-log F] -- program [args...]")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *tokenFile != "" {
		if *serviceAccount == "" {
			return fmt.Errorf("-token-file needs -service-account")
		}
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		defer func() { cancel(); <-done }()
		go func() {
			defer close(done)
			hostpod.RefreshTokens(ctx, hostpod.TokenOptions{
				Client: cs, Namespace: *namespace, ServiceAccount: *serviceAccount, File: *tokenFile, TTL: *tokenTTL,
			}, func(err error) { logger.Error("refresh token", "err", err) })
		}()
	}
	return hostpod.Run(ctx, hostpod.Options{
		Client:          cs,
		Namespace:       *namespace,
		Selector:        *selector,
		Argv:            fs.Args(),
		Env:             os.Environ(),
		LogPath:         *logPath,
		PreviousLogPath: *previous,
		Logger:          logger,
	})
}
