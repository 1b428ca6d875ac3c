package clustertest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Canaries are things of the host that no learner's cluster may reach, for
// the escape tests: files holding a secret (in the data directory, as
// another learner's kubeconfig, under /tmp), a directory under /tmp, and a
// port on loopback that counts every connection. Touched says what of them
// was read, changed or connected to.
type Canaries struct {
	Secret     string // the content of every canary file
	File       string // a file in the data directory, where the server's key lives
	Kubeconfig string // another learner's kubeconfig
	TmpFile    string // a file under /tmp
	TmpDir     string // a directory under /tmp, with a file in it
	Port       int    // a loopback port that counts connections
	conns      atomic.Int64
}

// PlantCanaries places canaries around dataDir, removed when the test ends.
func PlantCanaries(t testing.TB, dataDir string) *Canaries {
	t.Helper()
	b := make([]byte, 16)
	rand.Read(b)
	c := &Canaries{Secret: "canary-" + hex.EncodeToString(b)}
	c.File = filepath.Join(dataDir, "server", "server.key.canary")
	c.Kubeconfig = filepath.Join(dataDir, "clusters", "another-learner", "kubeconfig")
	tmp, err := os.MkdirTemp("/tmp", "oplab-canary-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(c.Kubeconfig)) })
	c.TmpFile, c.TmpDir = filepath.Join(tmp, "secret"), filepath.Join(tmp, "dir")
	for _, f := range c.files() {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c.Secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c.Port = l.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			conn.Close()
		}
	}()
	return c
}

func (c *Canaries) files() []string {
	return []string{c.File, c.Kubeconfig, c.TmpFile, filepath.Join(c.TmpDir, "keep")}
}

// Connections is how many connections the canary port has had.
func (c *Canaries) Connections() int64 { return c.conns.Load() }

// Touched says what of the canaries was changed, removed or connected to.
func (c *Canaries) Touched() []string {
	var out []string
	for _, f := range c.files() {
		if data, err := os.ReadFile(f); err != nil || !strings.Contains(string(data), c.Secret) {
			out = append(out, "file "+f+" changed or removed")
		}
	}
	if n := c.Connections(); n > 0 {
		out = append(out, fmt.Sprintf("%d connection(s) to the host's port %d", n, c.Port))
	}
	return out
}
