// Package embedded is the cluster provider that needs nothing installed: a
// real Kubernetes control plane per cluster (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler) run as child processes on
// loopback, with KWOK playing the kubelet of a node so pods are scheduled
// and become Running. etcd is one process; the other four components share
// a second one, kube-controlplane, built by `make controlplane`. API
// semantics are real (RBAC, admission, controllers); containers do not run,
// so the reference operator runs beside the cluster as a host process
// (HostProcessRunner) and its PostgreSQL servers are simulated.
//
// Each cluster lives in a directory of its own under the data directory:
// PKI, kubeconfigs, etcd data, component logs, and cluster.json recording
// ports and PIDs, so a later oplab process finds, health-checks and stops
// the processes an earlier one started. Nothing is held in memory that a
// killed oplab would lose: a half-made cluster is found by its free
// creation lock and removed, and two oplab processes (a server and a CLI)
// take turns on a cluster through a lock file in its directory.
//
// The package makes and runs clusters; it does not confine them or share
// out the machine. Where the machine allows (Confinement, package bwrap's
// Mode), each cluster runs in a cell (package cell) under a control group
// of its own (package budget): this package asks for them, and reports
// and keeps what the cluster takes (Usage, Maintain). It is reached only
// through internal/cluster's façade, which chooses it by name.
//
// A reading order:
//
//   - embedded.go: Options, New, Info, and Create (one creation: prepare,
//     seed, start), Delete, List and Status
//   - state.go: cluster.json, the record a later process reads
//   - components.go: the processes' command lines, the controllers that
//     run, and a cluster directory's layout; tuning.go: settings that trade
//     memory or time for nothing a lab can observe
//   - pki.go, kubeconfig.go: the cluster's CA, certificates and kubeconfigs
//   - ports.go: free ports outside the ephemeral range (a port taken
//     during start-up makes Create start over)
//   - process.go, health.go: starting, reaping, finding and stopping
//     processes by a marker in their environment; health probes
//   - seed.go: the etcd data of a new cluster's first moments, made once
//     per binaries and copied, so a cluster starts in about a second less
//   - bootstrap.go: what every cluster starts with (KWOK's CRDs and
//     stages, the node, the default StorageClass)
//   - abandon.go: the creation lock, and removing what a killed creator left
//   - start.go: Stop and Start, for the pods provider's cell pod
//   - cell.go: confinement, the cell's forwarded ports, HostProgram
//   - hostprocess.go: StartHostProcess and StopHostProcess (the operator)
//   - usage.go: Usage, Maintain and ConsoleGroup (providers.Budgeted)
//   - profiling.go: profiles served by new clusters, when asked
//
// Most of its behaviour is tested through internal/cluster on real
// binaries (TestTwoClustersIndependent, TestSemantics, TestCellWalls,
// TestSeed, TestStopAndStartKeepTheLearnersObjects). The tests here need
// none: an abandoned cluster and its lock (TestAbandonedCluster), ports
// taken during start-up (with scripts in place of the binaries), seed keys,
// sparse copies and pruning. BenchmarkSharedEtcd measured Kamaji's shared
// etcd beside one etcd per learner (not taken; docs/figures.md).
//
// It calls internal/cell and internal/bwrap (the cell), internal/budget
// (its control group), internal/jsonconv and the providers package whose
// interfaces it implements. It is called only by internal/cluster, which
// also runs it inside a cell pod of the pods provider
// (internal/cluster/cellpod).
package embedded
