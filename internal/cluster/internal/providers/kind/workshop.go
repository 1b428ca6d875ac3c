package kind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// A kind cluster's workshop (providers.Workshop): a learner's build and
// controller run as pods of the cluster, each its own sandbox. The nodes
// see two directories of this machine, bound at the same paths when the
// cluster is made (clusterConfig): the cluster's workspace, writable, and
// the provider's shared directories (Options.Shared: oplab's programs and
// the build kit), read-only. A pod sees what its Sandbox lists of them
// through hostPath volumes at the same paths, so a path means the same on
// this machine and in the pod; its root file system is the node's pause
// image, which holds nothing but the pause program. Only oplab's admin
// makes such pods: the fence refuses the learner any hostPath volume.

var (
	_ providers.PodWorkshop = (*Provider)(nil)
)

// workspace is the directory of cluster name that its nodes bind.
func (p *Provider) workspace(name string) string {
	return filepath.Join(p.clusterDir(name), "workspace")
}

// Uid and gid of a learner's pods: not root, not a user of the node.
const podUser = 65532

// buildNamespace holds the pods of builds: oplab's own namespace, where
// the fence refuses the learner everything.
const buildNamespace = "oplab-system"

// Workspace returns the cluster's workspace. A cluster made by an older
// oplab has none bound into its nodes: it must be made again.
func (p *Provider) Workspace(ctx context.Context, name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	ws := p.workspace(name)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("cluster %q has no workspace bound into its nodes (made by an older oplab): delete it and make it again", name)
	}
	return ws, nil
}

// Share makes the files under src readable, not writable, by the
// cluster's pods at dst, in its workspace: hard links, which the pods'
// user does not own and so cannot change (podOwn leaves them alone); a
// copy where src is on another file system.
func (p *Provider) Share(ctx context.Context, name, src, dst string) error {
	ws, err := p.Workspace(ctx, name)
	if err != nil {
		return err
	}
	// Directories the pods' user may read; podOwn gives them to it where
	// the tree is writable.
	return providers.ShareTree(ctx, ws, src, dst, 0o755, func(path, to string) error {
		if err := os.Link(path, to); !errors.Is(err, syscall.EXDEV) {
			return err
		}
		return providers.CopyFile(path, to, 0o644)
	})
}

// confined marks the command line Confine returns: on kind a confined
// program runs as a pod, which Run makes from the line.
const confined = "oplab-kind-pod"

// confinedLine is what Confine hands Run: the sandbox and the program.
type confinedLine struct {
	Sandbox providers.Sandbox `json:"sandbox"`
	Prog    string            `json:"prog"`
	Args    []string          `json:"args"`
}

// Confine returns the command line that Run runs as a pod of the cluster
// that sees only what c lists (see ConfinedPod). Nothing else runs it.
func (p *Provider) Confine(ctx context.Context, name string, c providers.Sandbox, prog string, args []string) (string, []string, error) {
	if _, err := p.sandboxVolumes(ctx, name, c, prog); err != nil {
		return "", nil, err
	}
	b, err := json.Marshal(confinedLine{Sandbox: c, Prog: prog, Args: args})
	if err != nil {
		return "", nil, err
	}
	return confined, []string{string(b)}, nil
}

// ConfinedPod returns the spec of a pod of the cluster that runs prog with
// args and sees only what c lists: each path at its own, the workspace's
// writable or not as c says, the shared directories' read-only; an empty
// /tmp (c.Tmp is not used); user 65532, no capabilities, no privilege to
// gain, the runtime's default seccomp profile, a read-only root file
// system that is the node's pause image; no ServiceAccount token unless
// the caller mounts one. A path of c that is writable is given to the
// pods' user first (podOwn).
func (p *Provider) ConfinedPod(ctx context.Context, name string, c providers.Sandbox, prog string, args []string) (corev1.PodSpec, error) {
	vols, err := p.sandboxVolumes(ctx, name, c, prog)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	ws, err := p.Workspace(ctx, name)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	for _, path := range c.Writable {
		if err := podOwn(ws, path); err != nil {
			return corev1.PodSpec{}, fmt.Errorf("give %s to the cluster's pods: %w", path, err)
		}
	}
	image, err := p.pauseImage(ctx, name)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	var mounts []corev1.VolumeMount
	var volumes []corev1.Volume
	for i, v := range vols {
		vn := fmt.Sprintf("v%d", i)
		volumes = append(volumes, corev1.Volume{Name: vn, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: v.path, Type: ptr.To(v.kind)},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: vn, MountPath: v.path, ReadOnly: !v.writable})
	}
	volumes = append(volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))},
	}})
	mounts = append(mounts, corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"})
	wd := c.Chdir
	if wd == "" {
		wd = "/tmp"
	}
	return corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsUser: ptr.To[int64](podUser), RunAsGroup: ptr.To[int64](podUser), RunAsNonRoot: ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes: volumes,
		Containers: []corev1.Container{{
			Name:            "program",
			Image:           image,
			ImagePullPolicy: corev1.PullNever,
			Command:         []string{prog},
			Args:            args,
			WorkingDir:      wd,
			VolumeMounts:    mounts,
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				ReadOnlyRootFilesystem:   ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}, nil
}

// volume is a path of a sandbox, as a hostPath volume.
type volume struct {
	path     string
	kind     corev1.HostPathType
	writable bool
}

// sandboxVolumes checks c and prog: every path in the cluster's workspace
// or, read-only, in a shared directory, and existing.
func (p *Provider) sandboxVolumes(ctx context.Context, name string, c providers.Sandbox, prog string) ([]volume, error) {
	ws, err := p.Workspace(ctx, name)
	if err != nil {
		return nil, err
	}
	check := func(path string, writable bool) (volume, error) {
		roots := []string{ws}
		if !writable {
			roots = append(roots, p.o.Shared...)
		}
		for _, root := range roots {
			if rel, err := filepath.Rel(root, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				fi, err := os.Lstat(path)
				if err != nil {
					return volume{}, fmt.Errorf("confine %s: %w", prog, err)
				}
				kind := corev1.HostPathFile
				switch {
				case fi.IsDir():
					kind = corev1.HostPathDirectory
				case !fi.Mode().IsRegular():
					return volume{}, fmt.Errorf("confine %s: %s is neither a file nor a directory", prog, path)
				}
				return volume{path: path, kind: kind, writable: writable}, nil
			}
		}
		if writable {
			return volume{}, fmt.Errorf("confine %s: %s is not in the cluster's workspace", prog, path)
		}
		return volume{}, fmt.Errorf("confine %s: %s is neither in the cluster's workspace nor in %s", prog, path, strings.Join(p.o.Shared, ", "))
	}
	var vols []volume
	for _, path := range c.ReadOnly {
		v, err := check(path, false)
		if err != nil {
			return nil, err
		}
		vols = append(vols, v)
	}
	for _, path := range c.Writable {
		v, err := check(path, true)
		if err != nil {
			return nil, err
		}
		vols = append(vols, v)
	}
	seen := slices.ContainsFunc(vols, func(v volume) bool {
		rel, err := filepath.Rel(v.path, prog)
		return err == nil && !strings.HasPrefix(rel, "..")
	})
	if !seen {
		return nil, fmt.Errorf("confine %s: the sandbox does not see its program", prog)
	}
	return vols, nil
}

// podOwn gives the files under path, in workspace ws, to the pods' user:
// directories and files of one link; a file with other links (shared with
// Share) stays the provider's, read-only. It works through an os.Root of
// the workspace, so that a link a pod made leads nowhere outside it.
func podOwn(ws, path string) error {
	rel, err := filepath.Rel(ws, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not in the workspace", path)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), filepath.ToSlash(rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if !d.IsDir() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				return nil
			}
		}
		return root.Lchown(p, podUser, podUser)
	})
}

// sandboxImage is the pause image in a node's containerd configuration.
var sandboxImage = regexp.MustCompile(`(?m)^\s*sandbox_image\s*=\s*"([^"]+)"`)

// pauseImage is the image of the node's pod sandboxes (the pause
// program): every node has it, and it holds nothing else.
func (p *Provider) pauseImage(ctx context.Context, name string) (string, error) {
	e, err := p.engine(ctx)
	if err != nil {
		return "", err
	}
	nodes, err := e.kind.ListInternalNodes(kindName(name))
	if err != nil || len(nodes) == 0 {
		return "", fmt.Errorf("the nodes of cluster %q: %v", name, err)
	}
	var out bytes.Buffer
	if err := nodes[0].CommandContext(ctx, "cat", "/etc/containerd/config.toml").SetStdout(&out).Run(); err != nil {
		return "", fmt.Errorf("read the node's containerd configuration: %w", err)
	}
	m := sandboxImage.FindSubmatch(out.Bytes())
	if m == nil {
		return "", errors.New("the node's containerd configuration names no sandbox image")
	}
	return string(m[1]), nil
}

// maxRunOutput bounds what Run copies of a pod's log.
const maxRunOutput = 1 << 20

// Run runs a command line of Confine as a pod in oplab-system and waits
// for it: its log is its output (stdout and stderr together, into
// c.Stdout), a non-zero exit is a *providers.ExitError, and ctx ending
// deletes the pod. There is no process state to return.
func (p *Provider) Run(ctx context.Context, name string, c providers.Command) (*os.ProcessState, error) {
	if c.Path != confined || len(c.Args) != 1 {
		return nil, fmt.Errorf("run %s: on kind a command runs only as a pod, confined (see Confine)", c.Path)
	}
	var line confinedLine
	if err := json.Unmarshal([]byte(c.Args[0]), &line); err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	spec, err := p.ConfinedPod(ctx, name, line.Sandbox, line.Prog, line.Args)
	if err != nil {
		return nil, err
	}
	spec.RestartPolicy = corev1.RestartPolicyNever
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		spec.Containers[0].Env = append(spec.Containers[0].Env, corev1.EnvVar{Name: k, Value: v})
	}
	cs, err := p.clientset(name)
	if err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: buildNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	pod, err := cs.CoreV1().Pods(buildNamespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Labels: map[string]string{"app.kubernetes.io/managed-by": "oplab"}},
		Spec:       spec,
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", line.Prog, err)
	}
	defer func() {
		// Gone at once, whatever happened: a pod cut off keeps no CPU.
		_ = cs.CoreV1().Pods(buildNamespace).Delete(context.WithoutCancel(ctx), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}()
	var term *corev1.ContainerStateTerminated
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().Pods(buildNamespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, s := range got.Status.ContainerStatuses {
			if t := s.State.Terminated; t != nil {
				term = t
				return true, nil
			}
			if w := s.State.Waiting; w != nil && (w.Reason == "CreateContainerError" || w.Reason == "ErrImageNeverPull" || w.Reason == "CreateContainerConfigError") {
				return false, fmt.Errorf("run %s: its pod cannot start: %s: %s", line.Prog, w.Reason, w.Message)
			}
		}
		return got.Status.Phase == corev1.PodFailed, nil
	})
	if err != nil {
		return nil, err
	}
	if c.Stdout != nil {
		logs, err := cs.CoreV1().Pods(buildNamespace).GetLogs(pod.Name, &corev1.PodLogOptions{LimitBytes: ptr.To[int64](maxRunOutput)}).DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the output of %s: %w", line.Prog, err)
		}
		c.Stdout.Write(logs)
	}
	if term == nil {
		return nil, fmt.Errorf("run %s: its pod failed before it ran", line.Prog)
	}
	if term.ExitCode != 0 {
		return nil, &providers.ExitError{Code: int(term.ExitCode)}
	}
	return nil, nil
}

// clientset is the admin's client of cluster name.
func (p *Provider) clientset(name string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", p.kubeconfig(name))
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}
