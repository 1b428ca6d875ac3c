package embedded

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// healthClient returns an HTTP client that trusts the cluster's CA and
// presents its admin certificate, which every component accepts.
func healthClient(p *pki) (*http.Client, error) {
	ca, err := readFile(p.path(caCertFile))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("no certificate in " + p.path(caCertFile))
	}
	cert, err := tls.LoadX509KeyPair(p.cert(adminName), p.key(adminName))
	if err != nil {
		return nil, fmt.Errorf("load admin certificate: %w", err)
	}
	return &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
			// Kept-alive connections spare the components a TLS handshake
			// per probe while Create polls them; callers close them.
			IdleConnTimeout: 10 * time.Second,
		},
	}, nil
}

// probe reports whether url answers 200.
func probe(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) // lets the connection be reused
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// waitHealthy polls url until it answers 200, the process dies, or timeout
// passes. A failure names the component and shows the tail of its log.
func waitHealthy(parent context.Context, c *http.Client, rec processRecord, marker string, timeout time.Duration, r *reaper) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	var last error
	for delay := 20 * time.Millisecond; ; delay = min(delay*3/2, 50*time.Millisecond) {
		if !r.alive(rec.PID, marker) {
			how := "exited"
			if st := r.exitStatus(rec.PID); st != "" {
				how += " (" + st + ")"
			}
			tail := logTail(rec.Log, 15)
			err := fmt.Errorf("%s %s during start-up; last lines of %s:\n%s", rec.process(), how, rec.Log, tail)
			if strings.Contains(tail, "address already in use") {
				err = fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		}
		if last = probe(ctx, c, rec.Health); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return err
			}
			return fmt.Errorf("%s not healthy after %s (%v); last lines of %s:\n%s", rec.Name, timeout, last, rec.Log, logTail(rec.Log, 15))
		case <-time.After(delay):
		}
	}
}

// errPortTaken marks a start-up that failed because another process bound
// a port of the cluster first; Create retries with other ports.
var errPortTaken = errors.New("a port was taken")

// logTail returns the last n lines of the file at path, indented.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "    (no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
