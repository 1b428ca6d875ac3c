package embedded

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// BenchmarkSharedEtcd measures, side by side, what etcd costs a learner
// with one etcd per learner (as every cluster runs today, on this machine
// and in a pod) and with one etcd under several learners' API servers,
// each under a key prefix of its own (Kamaji's shared datastore). Each of
// the four learners' API servers makes its bootstrap objects and oplab's
// default ServiceAccounts, what every cluster starts with; after ten
// seconds to settle, the etcd processes' PSS is summed and divided among
// the learners (MiB-etcd-own, MiB-etcd-shared), and the difference is what
// sharing would save a learner (MiB-saved).
//
//	go test -run '^$' -bench SharedEtcd -benchtime 1x -count 3 ./internal/cluster/internal/providers/embedded/
func BenchmarkSharedEtcd(b *testing.B) {
	bin, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "..", "bin"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, etcdBinary)); err != nil {
		b.Skipf("control-plane binaries not found in %s: run `make controlplane`", bin)
	}
	p, err := New(Options{BinDir: bin, DataDir: b.TempDir(), CacheDir: b.TempDir(), Confine: ConfineOff})
	if err != nil {
		b.Fatal(err)
	}
	const learners = 4
	for range b.N {
		own := etcdPerLearner(b, p, learners, false)
		shared := etcdPerLearner(b, p, learners, true)
		b.ReportMetric(own, "MiB-etcd-own")
		b.ReportMetric(shared, "MiB-etcd-shared")
		b.ReportMetric(own-shared, "MiB-saved")
	}
}

// etcdPerLearner starts n learners' API servers, each on an etcd of its
// own or all on one (shared), and returns the etcd processes' PSS per
// learner, in MiB.
func etcdPerLearner(b *testing.B, p *Provider, n int, shared bool) float64 {
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	var etcds []int
	var first *creation
	for i := range n {
		pt, err := allocatePorts(0, nil)
		if err != nil {
			b.Fatal(err)
		}
		c := first
		if c == nil || !shared {
			dir := b.TempDir()
			c = &creation{p: p, st: &clusterState{Name: fmt.Sprintf("learner-%d", i), Created: time.Now(), Ports: pt}, l: layout{dir}}
			if err := c.prepare(); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = p.stopProcesses(c.st, dir) })
			etcd, _ := processes(c.l, c.pki, pt, c.st.Name, p.tune, p.budget.Etcd)
			recs, err := c.start(etcd)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.wait(ctx, mustHealthClient(b, c), apiserverTimeout, recs...); err != nil {
				b.Fatal(err)
			}
			etcds = append(etcds, recs[0].PID)
			first = c
		} else {
			// Another learner's API server on the first etcd: its own
			// port, the first's certificates, a key prefix of its own.
			pt.EtcdClient = c.st.Ports.EtcdClient
		}
		_, cp := processes(c.l, c.pki, pt, c.st.Name, p.tune, p.budget.Etcd)
		cp = cp.only(1)
		cp.args = append(cp.args, fmt.Sprintf("--etcd-prefix=/learner-%d", i))
		token, err := seedAuthentication(&cp, c.l)
		if err != nil {
			b.Fatal(err)
		}
		recs, err := c.start(cp)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.wait(ctx, mustHealthClient(b, c), apiserverTimeout, recs...); err != nil {
			b.Fatal(err)
		}
		cs, err := kubernetes.NewForConfig(&rest.Config{
			Host: url(pt.APIServer, ""), BearerToken: token,
			TLSClientConfig: rest.TLSClientConfig{CAFile: c.pki.path(caCertFile)},
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := waitBootstrapped(ctx, cs); err != nil {
			b.Fatal(err)
		}
		if err := createDefaultServiceAccounts(ctx, cs); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(10 * time.Second)
	var total uint64
	for _, pid := range etcds {
		pss, err := pssOf(pid)
		if err != nil {
			b.Fatal(err)
		}
		total += pss
	}
	return float64(total) / float64(n) / (1 << 20)
}

func mustHealthClient(b *testing.B, c *creation) *http.Client {
	b.Helper()
	hc, err := healthClient(c.pki)
	if err != nil {
		b.Fatal(err)
	}
	return hc
}

// pssOf reads a process's proportional set size, in bytes.
func pssOf(pid int) (uint64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "Pss:" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no Pss in /proc/%d/smaps_rollup", pid)
}
