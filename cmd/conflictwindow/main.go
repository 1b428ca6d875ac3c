// Command conflictwindow serves the ConflictWindow admission webhook
// (package conflictwindow) over TLS, in a kind cluster whose API server
// has no ConflictWindow plugin. It is built without cgo: it runs in a pod
// whose root is the node's pause image.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/conflictwindow"
)

func main() {
	addr := flag.String("addr", ":8443", "address to serve on")
	cert := flag.String("tls-cert", "", "the serving certificate (PEM)")
	key := flag.String("tls-key", "", "its key (PEM)")
	admins := flag.String("admins", "system:masters", "comma-separated groups of the cluster's admins")
	flag.Parse()
	if err := run(*addr, *cert, *key, strings.Split(*admins, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "conflictwindow:", err)
		os.Exit(1)
	}
}

func run(addr, cert, key string, admins []string) error {
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           &conflictwindow.Webhook{Admins: admins},
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	log.Printf("serving the ConflictWindow webhook on %s", addr)
	if err := srv.ListenAndServeTLS("", ""); err != http.ErrServerClosed {
		return err
	}
	return nil
}
