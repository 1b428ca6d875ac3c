package embedded

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Addresses inside the cluster. KWOK gives pods addresses from podCIDR; the
// service range must not overlap it.
const (
	serviceCIDR = "10.96.0.0/16"
	serviceIP   = "10.96.0.1" // the kubernetes Service, first of serviceCIDR
	podCIDR     = "10.0.0.1/16"
	loopback    = "127.0.0.1"
)

// controllers are the controller-manager's controllers that run: every one a
// lesson or a chaos exercise relies on, and none that needs a kubelet, a
// cloud or metrics (attach-detach, HPA, node IPAM, CSR signing), which only
// cost memory here.
//
// Nor the node lifecycle controller (nor the taint eviction controller,
// which acts on the taints it sets). It marks a node NotReady, and every
// pod on it not ready, when the node's lease is older than a grace period;
// here the node is KWOK, in the same process as the controller, so a lease
// grows old only when the whole process could not run: a machine too busy,
// or a session asleep (frozen, Freeze). Thawed after ten minutes, it would
// see a lease ten minutes old before KWOK renewed it, and the learner would
// come back to a failover nobody caused. No lab stops the node; a cordon
// still keeps pods off it (the scheduler reads spec.unschedulable itself).
// Without it, the API server must not taint a new node not-ready either: the
// TaintNodesByCondition admission plugin is off (see the API server's flags).
var controllers = []string{
	"clusterrole-aggregation-controller",
	"cronjob-controller",
	"daemonset-controller",
	"deployment-controller",
	"disruption-controller",
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
	"ephemeral-volume-controller",
	"garbage-collector-controller",
	"job-controller",
	"namespace-controller",
	"persistentvolume-binder-controller",
	"persistentvolume-protection-controller",
	"persistentvolumeclaim-protection-controller",
	"pod-garbage-collector-controller",
	"replicaset-controller",
	"replicationcontroller-controller",
	"resourcequota-controller",
	"root-ca-certificate-publisher-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"statefulset-controller",
	"ttl-after-finished-controller",
}

// layout names the files of a cluster's state directory.
type layout struct{ dir string }

func (l layout) pkiDir() string                  { return filepath.Join(l.dir, "pki") }
func (l layout) logDir() string                  { return filepath.Join(l.dir, "logs") }
func (l layout) etcdDir() string                 { return filepath.Join(l.dir, "etcd") }
func (l layout) kubeconfig() string              { return filepath.Join(l.dir, "kubeconfig") }
func (l layout) componentConfig(n string) string { return filepath.Join(l.dir, n+".kubeconfig") }
func (l layout) kwokConfig() string              { return filepath.Join(l.dir, "kwok.yaml") }
func (l layout) log(name string) string          { return filepath.Join(l.logDir(), name+".log") }

// process is one child process of a cluster and the components it runs.
type process struct {
	binary string // the file's name in the bin directory
	args   []string
	// env adds to the minimal environment every process gets.
	env []string
	// members are the components the process runs, in start order.
	members []member
}

// member is a component inside a process.
type member struct {
	name   string
	health string // URL answering 200 when healthy
}

// The two processes of a cluster: etcd, and kube-controlplane, which runs
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok in one
// process (hack/tools/controlplane/cmd/kube-controlplane) so the code they
// share is loaded once.
const (
	etcdBinary         = "etcd"
	controlPlaneBinary = "kube-controlplane"
	// groupSeparator divides kube-controlplane's arguments per component.
	groupSeparator = "---"
)

func url(port int, path string) string {
	return "https://" + loopback + ":" + strconv.Itoa(port) + path
}

// processes returns the cluster's two processes, in start order; etcd's
// database may hold quota bytes.
//
// etcd's space is bounded three ways: the quota (beyond it etcd refuses
// writes with "database space exceeded"), compaction every five minutes
// (the API server compacts on the same period), and two write-ahead log
// segments kept (budget.WALBytes on disk at most). Defragmentation, which
// gives a compacted database's free pages back, is the provider's
// maintenance (Maintain).
func processes(l layout, p *pki, pt ports, clusterName string, tune tuning, quota int64) (etcd, cp process) {
	etcd = process{
		binary: etcdBinary,
		env:    tune.env[etcdBinary],
		args: []string{
			"--name=oplab",
			"--data-dir=" + l.etcdDir(),
			"--listen-client-urls=" + url(pt.EtcdClient, ""),
			"--advertise-client-urls=" + url(pt.EtcdClient, ""),
			"--listen-peer-urls=http://" + loopback + ":" + strconv.Itoa(pt.EtcdPeer),
			"--initial-advertise-peer-urls=http://" + loopback + ":" + strconv.Itoa(pt.EtcdPeer),
			"--initial-cluster=oplab=http://" + loopback + ":" + strconv.Itoa(pt.EtcdPeer),
			"--cert-file=" + p.cert(servingName),
			"--key-file=" + p.key(servingName),
			"--trusted-ca-file=" + p.path(caCertFile),
			"--client-cert-auth=true",
			"--auto-compaction-mode=periodic",
			"--auto-compaction-retention=5m",
			"--quota-backend-bytes=" + strconv.FormatInt(quota, 10),
			"--max-wals=2",
			"--log-level=warn",
		},
		members: []member{{name: "etcd", health: url(pt.EtcdClient, "/health")}},
	}
	etcd.args = append(etcd.args, tune.etcd...)

	apiserver := []string{
		"--etcd-servers=" + url(pt.EtcdClient, ""),
		"--etcd-cafile=" + p.path(caCertFile),
		"--etcd-certfile=" + p.cert(etcdClient),
		"--etcd-keyfile=" + p.key(etcdClient),
		"--bind-address=" + loopback,
		"--advertise-address=" + loopback,
		"--secure-port=" + strconv.Itoa(pt.APIServer),
		"--tls-cert-file=" + p.cert(servingName),
		"--tls-private-key-file=" + p.key(servingName),
		"--client-ca-file=" + p.path(caCertFile),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + p.path(saPubFile),
		"--service-account-signing-key-file=" + p.path(saKeyFile),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--proxy-client-cert-file=" + p.cert(frontProxy),
		"--proxy-client-key-file=" + p.key(frontProxy),
		"--requestheader-client-ca-file=" + p.path(caCertFile),
		"--requestheader-allowed-names=" + frontProxyCN,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		// KWOK serves the kubelet API (pod logs) on the node's InternalIP;
		// the node's name does not resolve.
		"--kubelet-preferred-address-types=InternalIP",
		// The kubernetes Service cannot have a loopback endpoint, and no
		// pod runs that could reach one.
		"--endpoint-reconciler-type=none",
		// The node is created tainted not-ready by this plugin, and only the
		// node lifecycle controller, which does not run here (see
		// controllers), would take the taint off: no pod would schedule.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--allow-privileged=true",
		"--profiling=false",
	}
	apiserver = append(apiserver, tune.apiserver...)

	componentFlags := func(kubeconfig string, port int) []string {
		return []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
			"--bind-address=" + loopback,
			"--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + p.cert(servingName),
			"--tls-private-key-file=" + p.key(servingName),
			"--leader-elect=false",
			"--profiling=false",
		}
	}
	cm := append(componentFlags(l.componentConfig(cmName), pt.ControllerManager),
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+p.path(saKeyFile),
		"--root-ca-file="+p.path(caCertFile),
		"--cluster-signing-cert-file="+p.path(caCertFile),
		"--cluster-signing-key-file="+p.path("ca.key"),
		"--cluster-name=oplab-"+clusterName,
		"--controllers="+strings.Join(controllers, ","),
		// The in-tree host-path provisioner behind the default
		// StorageClass: the real PersistentVolume controller provisions
		// and binds claims, and reports a missing StorageClass as a
		// ProvisioningFailed event, as on any cluster.
		"--enable-hostpath-provisioner=true",
		// A claim whose StorageClass appears later (the storage lab's
		// repair) is provisioned within 2 s instead of 15 s.
		"--pvclaimbinder-sync-period=2s",
	)
	cm = append(cm, tune.controllerManager...)

	sched := append(componentFlags(l.componentConfig(schedName), pt.Scheduler), tune.scheduler...)

	kwok := []string{
		"--kubeconfig=" + l.componentConfig(kwokName),
		"--config=" + l.kwokConfig(),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-ip=" + loopback,
		"--node-port=" + strconv.Itoa(pt.Kwok),
		"--server-address=" + loopback + ":" + strconv.Itoa(pt.Kwok),
		"--tls-cert-file=" + p.cert(servingName),
		"--tls-private-key-file=" + p.key(servingName),
		"--cidr=" + podCIDR,
		"--enable-crds=Logs,ClusterLogs",
	}
	kwok = append(kwok, tune.kwok...)

	cp = process{
		binary: controlPlaneBinary,
		env:    tune.env[controlPlaneBinary],
		// kube-apiserver first: create waits on it alone before it makes
		// the cluster's first objects, then on the others.
		members: []member{
			{name: "kube-apiserver", health: url(pt.APIServer, "/readyz")},
			{name: "kube-controller-manager", health: url(pt.ControllerManager, "/healthz")},
			{name: "kube-scheduler", health: url(pt.Scheduler, "/readyz")},
			{name: "kwok", health: url(pt.Kwok, "/healthz")},
		},
	}
	if tune.startupProfile {
		cp.env = append(slices.Clone(cp.env), "KUBE_CONTROLPLANE_CPUPROFILE="+filepath.Join(l.logDir(), "kube-controlplane-startup.pprof"))
	}
	for i, args := range [][]string{apiserver, cm, sched, kwok} {
		if i > 0 {
			cp.args = append(cp.args, groupSeparator)
		}
		cp.args = append(cp.args, cp.members[i].name)
		cp.args = append(cp.args, args...)
	}
	return etcd, cp
}

// kwokNodeAnnotation marks the nodes KWOK plays the kubelet of.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"
