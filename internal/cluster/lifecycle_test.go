package cluster_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestTwoClustersIndependent runs two clusters side by side: what happens in
// one is not seen in the other, a killed component degrades only its own
// cluster, and delete leaves no process and no directory.
func TestTwoClustersIndependent(t *testing.T) {
	p, data := clustertest.NewProvider(t)
	a := clustertest.Create(t, p, data, clustertest.UniqueName("a"))
	b := clustertest.Create(t, p, data, clustertest.UniqueName("b"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if a.Config.Host == b.Config.Host {
		t.Fatalf("both clusters serve on %s", a.Config.Host)
	}
	if _, err := a.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client.CoreV1().ConfigMaps("default").Get(ctx, "only-in-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get a's ConfigMap from b: got %v, want NotFound", err)
	}
	// Each cluster has its own CA: a's admin credentials are refused by b.
	cross := *a.Config
	cross.Host = b.Config.Host
	cross.TLSClientConfig.CAData = b.Config.TLSClientConfig.CAData
	if cs, err := newClient(&cross); err == nil {
		if _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("a's admin certificate on b: got %v, want 401 Unauthorized", err)
		}
	}

	list, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].State != cluster.StateRunning || list[1].State != cluster.StateRunning {
		t.Fatalf("list: got %+v, want two running clusters", list)
	}

	// Kill b's scheduler (and with it b's kube-controlplane process, which
	// runs it): b is degraded, a is not.
	sb, err := p.Status(ctx, b.Name)
	if err != nil {
		t.Fatal(err)
	}
	sched := component(t, sb, "kube-scheduler")
	if err := syscall.Kill(sched.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState(t, ctx, p, b.Name, cluster.StateDegraded)
	// Its health endpoint fails at once; the exit is seen once the kernel
	// has torn the process down.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		sb, _ = p.Status(ctx, b.Name)
		c := component(t, sb, "kube-scheduler")
		if !c.Alive {
			if sb.State != cluster.StateDegraded {
				t.Errorf("cluster b with its control plane dead and etcd alive: got %s, want degraded", sb.State)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("killed kube-scheduler still reported alive after 10 s: %+v", c)
		}
	}
	if sa, err := p.Status(ctx, a.Name); err != nil || sa.State != cluster.StateRunning {
		t.Errorf("cluster a after b's scheduler died: got %v %v, want running", sa.State, err)
	}

	// Delete b: no process of it and no directory remain.
	if err := p.Delete(ctx, b.Name); err != nil {
		t.Fatal(err)
	}
	for _, c := range sb.Components {
		if processExists(c.PID) && strings.Contains(cmdline(c.PID), b.Name) {
			t.Errorf("%s (pid %d) still runs after delete", c.Name, c.PID)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "clusters", b.Name)); !os.IsNotExist(err) {
		t.Errorf("cluster directory after delete: got %v, want it gone", err)
	}
	if _, err := p.Status(ctx, b.Name); !errors.Is(err, cluster.ErrNotFound) {
		t.Errorf("status after delete: got %v, want ErrNotFound", err)
	}
	if _, err := a.Client.CoreV1().ConfigMaps("default").Get(ctx, "only-in-a", metav1.GetOptions{}); err != nil {
		t.Errorf("cluster a after b was deleted: %v", err)
	}
}

func component(t *testing.T, s cluster.Status, name string) cluster.ComponentStatus {
	t.Helper()
	for _, c := range s.Components {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("cluster %s has no component %s: %+v", s.Name, name, s.Components)
	return cluster.ComponentStatus{}
}

func waitState(t *testing.T, ctx context.Context, p *cluster.Provider, name string, want cluster.State) {
	t.Helper()
	var got cluster.State
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		s, err := p.Status(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got = s.State; got == want {
			return
		}
	}
	t.Fatalf("cluster %s state: got %s, want %s", name, got, want)
}

func processExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(b)
}

// TestBadInput: every refusal is a clear error and leaves nothing behind.
func TestBadInput(t *testing.T) {
	ctx := context.Background()

	t.Run("InvalidName", func(t *testing.T) {
		p, data := clustertest.NewProvider(t)
		for _, name := range []string{"", "Alice", "-a", "a_b", "a.b", strings.Repeat("a", 41), "../x"} {
			err := p.Create(ctx, name)
			if !errors.Is(err, cluster.ErrInvalidName) {
				t.Errorf("create %q: got %v, want ErrInvalidName", name, err)
			}
		}
		assertEmpty(t, data)
	})

	t.Run("UnknownName", func(t *testing.T) {
		p, _ := clustertest.NewProvider(t)
		if err := p.Delete(ctx, "nope"); !errors.Is(err, cluster.ErrNotFound) {
			t.Errorf("delete: got %v, want ErrNotFound", err)
		}
		if _, err := p.Status(ctx, "nope"); !errors.Is(err, cluster.ErrNotFound) {
			t.Errorf("status: got %v, want ErrNotFound", err)
		}
		if _, err := p.KubeconfigPath("nope"); !errors.Is(err, cluster.ErrNotFound) {
			t.Errorf("kubeconfig: got %v, want ErrNotFound", err)
		}
	})

	t.Run("MissingBinary", func(t *testing.T) {
		bin := t.TempDir()
		if err := os.Symlink(filepath.Join(clustertest.BinDir(t), "etcd"), filepath.Join(bin, "etcd")); err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(bin, data))
		if err != nil {
			t.Fatal(err)
		}
		err = p.Create(ctx, "x")
		missing := filepath.Join(bin, "kube-controlplane")
		if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "make controlplane") {
			t.Errorf("create without kube-controlplane: got %v, want an error naming %s and `make controlplane`", err, missing)
		}
		assertEmpty(t, data)
	})

	t.Run("ComponentFailsToStart", func(t *testing.T) {
		// A control plane that dies at start, after etcd is up: the error
		// names it and shows its log, and the half-made cluster is stopped
		// and removed.
		bin := t.TempDir()
		if err := os.Symlink(filepath.Join(clustertest.BinDir(t), "etcd"), filepath.Join(bin, "etcd")); err != nil {
			t.Fatal(err)
		}
		script := "#!/bin/sh\necho 'kube-apiserver: cannot load configuration' >&2\nexit 3\n"
		if err := os.WriteFile(filepath.Join(bin, "kube-controlplane"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		data, cache := t.TempDir(), t.TempDir()
		p, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{BinDir: bin, DataDir: data, CacheDir: cache}))
		if err != nil {
			t.Fatal(err)
		}
		var started []string
		err = p.Create(ctx, "broken", cluster.CreateWithProgress(func(s cluster.Step) {
			if !s.Done {
				started = append(started, s.Name)
			}
		}))
		if err == nil || !strings.Contains(err.Error(), "kube-controlplane (kube-apiserver) exited (exit status 3) during start-up") || !strings.Contains(err.Error(), "cannot load configuration") {
			t.Fatalf("create with a failing control plane: got %v, want an error naming kube-controlplane with its log", err)
		}
		// The first create on an empty cache fails while it makes the
		// cluster seed, and leaves no half-made seed.
		if len(started) != 2 || !strings.HasPrefix(started[1], "Making the cluster seed") {
			t.Errorf("progress steps: got %q, want the steps up to the failing seed", started)
		}
		assertEmpty(t, data)
		if seeds, _ := os.ReadDir(filepath.Join(cache, "etcd-seeds")); len(seeds) != 0 {
			t.Errorf("a failed seed left %d entries in the cache", len(seeds))
		}
	})

	t.Run("PortInUse", func(t *testing.T) {
		p, data := clustertest.NewProvider(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		err = p.Create(ctx, "x", cluster.CreateWithAPIServerPort(port))
		if err == nil || !strings.Contains(err.Error(), strconv.Itoa(port)) || !strings.Contains(err.Error(), "in use") {
			t.Errorf("create on a taken port: got %v, want an error saying port %d is in use", err, port)
		}
		assertEmpty(t, data)
	})

	t.Run("DuplicateName", func(t *testing.T) {
		p, data := clustertest.NewProvider(t)
		c := clustertest.Create(t, p, data, "dup")
		err := p.Create(ctx, "dup")
		if !errors.Is(err, cluster.ErrAlreadyExists) {
			t.Fatalf("second create: got %v, want ErrAlreadyExists", err)
		}
		// The refusal must not have touched the first cluster.
		s, err := p.Status(ctx, "dup")
		if err != nil || s.State != cluster.StateRunning {
			t.Fatalf("first cluster after the refusal: got %v %v, want running", s.State, err)
		}
		if _, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("first cluster's API after the refusal: %v", err)
		}
	})
}

// assertEmpty fails when a refused create left anything in the data dir.
func assertEmpty(t *testing.T, data string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(data, "clusters"))
	for _, e := range entries {
		t.Errorf("left behind: %s", filepath.Join(data, "clusters", e.Name()))
	}
}
