package embedded

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// A seed is the etcd data of a new cluster's first moments, kept so that the
// next cluster does not make it again: the API server's bootstrap objects
// (about 130 RBAC roles and bindings, the system PriorityClasses and
// namespaces, the kubernetes Service and its ServiceCIDR) and oplab's own
// (KWOK's CRDs, the default StorageClass). A new API server makes its
// bootstrap objects one by one before it reports ready, about a second of a
// cluster's start; started on a copy of a seed, it finds them in place.
//
// Nothing in a seed belongs to one cluster: no certificate, key or token is
// stored in it, and the objects that name the seed's own API server are
// corrected when a cluster starts (the cluster-authentication ConfigMap by
// the API server itself, the kubernetes Service's target port by
// fixKubernetesService). A seed is made by the first Create after the
// control-plane binaries change, keyed by their identity, and shared by
// every data directory through the cache directory.
const (
	seedsDir = "etcd-seeds"
	// seedFormat changes whenever what a seed holds changes. 3: the API
	// server runs without APIServerIdentity (see tuning.go), so a seed holds
	// no identity lease of the API server that made it.
	seedFormat = "3"
	// seedUnused is how long a seed of other binaries is kept after its
	// last use.
	seedUnused = 7 * 24 * time.Hour
	// seedAbandoned is how old a seed being made without a creation lock
	// must be to count as abandoned: making one takes seconds.
	seedAbandoned = 10 * time.Minute
)

// seedKey identifies the seed that the current binaries and settings make.
func (p *Provider) seedKey() (string, error) {
	h := sha256.New()
	io.WriteString(h, seedFormat+"\x00"+serviceCIDR+"\x00"+StorageClassName+"\x00"+hostPathProvisioner+"\x00")
	h.Write(kwokCRDs)
	for _, b := range binaries {
		fi, err := os.Stat(filepath.Join(p.binDir, b))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "\x00%s %d %d", b, fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// seed returns the directory of the seed for the current binaries, making
// it first when there is none.
func (c *creation) seed(ctx context.Context) (string, error) {
	p := c.p
	key, err := p.seedKey()
	if err != nil {
		return "", err
	}
	root := filepath.Join(p.cacheDir, seedsDir)
	dir := filepath.Join(root, key)
	if _, err := os.Stat(dir); err == nil {
		now := time.Now()
		_ = os.Chtimes(dir, now, now) // marks it used, for pruneSeeds
		return dir, nil
	}
	if err := c.step("Making the cluster seed (once for these binaries)", func() error {
		return p.makeSeed(ctx, root, dir)
	}); err != nil {
		return "", err
	}
	return dir, nil
}

// makeSeed starts etcd and the API server alone in a temporary directory
// under root, lets the API server make its bootstrap objects, adds oplab's,
// stops both and stores a sparse copy of their etcd data as dir. Concurrent
// Creates may each make one; the first rename wins and the others are
// dropped.
func (p *Provider) makeSeed(ctx context.Context, root, dir string) (err error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	p.pruneSeeds(root, filepath.Base(dir))
	tmp, err := os.MkdirTemp(root, ".making-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	release, err := holdCreating(tmp)
	if err != nil {
		return err
	}
	defer release()
	pt, err := p.newPorts(0)
	if err != nil {
		return err
	}
	st := &clusterState{Name: "seed", Created: time.Now().UTC(), Ports: pt}
	c := &creation{p: p, st: st, l: layout{tmp}}
	defer func() {
		if serr := p.stopProcesses(st, tmp); serr != nil {
			err = errors.Join(err, serr)
		}
		// The seed's cell had a group of its own, as every cell has.
		if g := st.Cell.group(); g != nil {
			if gerr := g.Delete(); gerr != nil {
				err = errors.Join(err, gerr)
			}
		}
	}()
	if err := c.prepare(); err != nil {
		return err
	}
	hc, err := healthClient(c.pki)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	if p.confined {
		if err := c.startCell(ctx); err != nil {
			return err
		}
		// A cell's user may not add entries to the cluster's directory:
		// etcd's data directory is made for it.
		if err := os.Mkdir(c.l.etcdDir(), 0o700); err != nil {
			return err
		}
	}
	etcd, cp := processes(c.l, c.pki, pt, st.Name, p.tune, p.budget.Etcd)
	cp = cp.only(1)
	token, err := seedAuthentication(&cp, c.l)
	if err != nil {
		return err
	}
	for _, proc := range []process{etcd, cp} {
		recs, err := c.start(proc)
		if err != nil {
			return err
		}
		if err := c.wait(ctx, hc, apiserverTimeout, recs...); err != nil {
			return err
		}
	}
	cfg := &rest.Config{
		Host:            url(pt.APIServer, ""),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.pki.path(caCertFile)},
		// The field manager of the objects made here, whichever program
		// runs Create.
		UserAgent: "oplab",
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := applyCRDs(ctx, cfg, kwokCRDs); err != nil {
		return err
	}
	if err := createStorageClass(ctx, cs); err != nil {
		return err
	}
	if err := waitBootstrapped(ctx, cs); err != nil {
		return err
	}
	if err := createDefaultServiceAccounts(ctx, cs); err != nil {
		return err
	}
	// Stop the API server, then etcd, so the data on disk is complete.
	if err := p.stopProcesses(st, tmp); err != nil {
		return err
	}
	st.Processes = nil
	// A sparse copy: the write-ahead log is a preallocated 64 MB file of
	// which the seed uses a few hundred KiB.
	made := filepath.Join(tmp, "seed")
	if err := copyTree(c.l.etcdDir(), made); err != nil {
		return err
	}
	if err := os.Rename(made, dir); err != nil {
		if _, serr := os.Stat(dir); serr == nil {
			return nil // another Create made it first
		}
		return fmt.Errorf("store seed: %w", err)
	}
	p.logger.Info("made a cluster seed", "dir", dir)
	return nil
}

// seedAuthentication makes the seed's API server authenticate its one
// client with a token instead of client certificates. An API server stores
// the CAs it trusts for client certificates in the ConfigMap
// kube-system/extension-apiserver-authentication and adds its own to those it
// finds there, so a seed made with a client CA would leave that CA trusted
// in every cluster started from it. It returns the token.
func seedAuthentication(cp *process, l layout) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	file := filepath.Join(l.dir, "seed-tokens.csv")
	if err := os.WriteFile(file, []byte(token+",oplab-seed,oplab-seed,system:masters\n"), 0o600); err != nil {
		return "", err
	}
	cp.args = slices.DeleteFunc(cp.args, func(a string) bool {
		return strings.HasPrefix(a, "--client-ca-file=") || strings.HasPrefix(a, "--requestheader-")
	})
	cp.args = append(cp.args, "--token-auth-file="+file)
	// Unauthenticated, /readyz answers once the bootstrap RBAC roles exist.
	return token, nil
}

// systemNamespaces are the namespaces every cluster starts with.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// waitBootstrapped waits for the objects the API server makes after it
// reports ready: the system namespaces and the kubernetes Service.
func waitBootstrapped(ctx context.Context, cs kubernetes.Interface) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, componentTimeout, true, func(ctx context.Context) (bool, error) {
		for _, ns := range systemNamespaces {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		_, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, kubernetesService, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the API server's bootstrap objects did not appear: %w", err)
	}
	return nil
}

// createDefaultServiceAccounts makes the ServiceAccount "default" of each
// system namespace, as the controller-manager's serviceaccount controller
// makes it (a name and nothing else). A pod is not admitted before its
// namespace has one, and in a new cluster the controller makes them only
// after all of the controller-manager's controllers have started, half a
// second after the API server is ready.
func createDefaultServiceAccounts(ctx context.Context, cs kubernetes.Interface) error {
	for _, ns := range systemNamespaces {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ServiceAccount %s/default: %w", ns, err)
		}
	}
	return nil
}

// kubernetesService is the Service through which pods reach the API server.
const kubernetesService = "kubernetes"

// fixKubernetesService points the kubernetes Service at this cluster's API
// server port. The API server sets the port when it creates the Service and
// leaves an existing one alone, so a cluster started from a seed has the
// seed's.
func fixKubernetesService(ctx context.Context, cs kubernetes.Interface, port int) error {
	svc, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, kubernetesService, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get the kubernetes Service: %w", err)
	}
	changed := false
	for i := range svc.Spec.Ports {
		if sp := &svc.Spec.Ports[i]; sp.Name == "https" && sp.TargetPort.IntValue() != port {
			sp.TargetPort.IntVal = int32(port)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if _, err := cs.CoreV1().Services(metav1.NamespaceDefault).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update the kubernetes Service: %w", err)
	}
	return nil
}

// pruneSeeds removes the seeds of other binaries that no Create has used
// for seedUnused, and what a Create killed while it made a seed left: the
// directory and the processes it recorded there.
func (p *Provider) pruneSeeds(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		fi, err := e.Info()
		switch {
		case err != nil || e.Name() == keep:
			continue
		case strings.HasPrefix(e.Name(), ".making-"):
			if creatorAlive(dir) {
				continue // another Create is making it
			}
			if _, err := os.Stat(filepath.Join(dir, creatingLock)); err != nil && time.Since(fi.ModTime()) < seedAbandoned {
				continue // just made: its lock is not taken yet
			}
			if st, err := readState(dir); err == nil {
				if err := p.stopProcesses(st, dir); err != nil {
					p.logger.Warn("stop the processes of an abandoned seed", "dir", dir, "error", err)
					continue
				}
			}
			if err := p.stopMarked(dir); err != nil {
				p.logger.Warn("stop the processes of an abandoned seed", "dir", dir, "error", err)
				continue
			}
		case time.Since(fi.ModTime()) < seedUnused:
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			p.logger.Warn("remove an old cluster seed", "dir", dir, "error", err)
		}
	}
}

// copyTree copies the regular files and directories under src to dst,
// which must not exist, private to the user.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			return providers.CopyFile(path, target, 0o600)
		default:
			return fmt.Errorf("copy %s: not a regular file", path)
		}
	})
}

// only returns the process with its first n members, and their arguments.
func (proc process) only(n int) process {
	out := proc
	out.members = proc.members[:n]
	groups := 0
	for i, a := range proc.args {
		if a == groupSeparator {
			groups++
			if groups == n {
				out.args = slices.Clone(proc.args[:i])
				break
			}
		}
	}
	return out
}
