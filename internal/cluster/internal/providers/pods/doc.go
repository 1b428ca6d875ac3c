// Package pods is the cluster backend whose clusters are pods on a host
// Kubernetes cluster: each learner's control plane — the embedded
// provider's etcd and kube-controlplane with KWOK — runs in a StatefulSet
// of one pod (the learner's cell, see package cellpod), its state on a
// claim of its own, reached through a ClusterIP Service that a
// NetworkPolicy opens to oplab's server pods only.
//
// This is how a class outgrows one machine: the host cluster schedules the
// cells, keeps their state on claims and brings a replaced pod back, and
// oplab's server, running there as a Deployment of several replicas,
// holds no cluster of its own. A namespace per learner was not enough:
// CRDs and ClusterRoles are cluster-scoped, so the labs about them would
// collide. The backend only makes and finds cells through the host's API
// server; what runs inside one is cellpod's (internal/cluster/cellpod,
// cmd/cellpod), which keeps one embedded cluster in the pod, the reference
// operator beside it and the web console's commands in a third container.
//
// oplab's server reaches a learner's API server one of two ways (Reach):
// through the Service, when it runs in the host cluster, or through a port
// forward of the host API server, when it runs outside (a developer's
// machine, the tests). Either way the admin kubeconfig is read once from
// the pod and kept in a Secret beside it, so any replica of the server can
// use the cluster.
//
// A reading order:
//
//   - pods.go: Options and DefaultOptions (a cell's requests and limits,
//     from package budget's shares), New, Info, Create (the objects, the
//     pod scheduled and ready, the kubeconfig kept, the API server
//     reached), Delete, List, Status, KubeconfigPath, and ExecConsole,
//     which runs a console command in the cell (providers.CellConsole)
//   - objects.go: the cell's StatefulSet, pod, Service and NetworkPolicy,
//     and what the pod leaves out (no token of the host, no host path, no
//     privilege, nothing out through the network); CellObjects gives the
//     pod and policy without a host, for tests of the network wall
//   - tunnel.go: the port forward (ReachPortForward), which follows a
//     replaced pod on the same local port
//   - room.go: Room, the host cluster's room for more cells as package
//     admission measures it (requests, quota and nodes' allocatable)
//
// The package has no tests of its own: internal/cluster's tests drive it
// through the façade. TestPodsRoom runs on an embedded cluster as the host;
// TestKindPodsProvider (three learners' cells on a kind host: a deleted
// pod comes back with the learner's objects, Delete leaves nothing) and
// the BenchmarkKindPods* figures need kind and are gated as every kind
// test (clustertest.NewPodsProvider). The offline kind host's CNI enforces
// no NetworkPolicy, so the network wall is evaluated by the API's rules
// (internal/netpolicy): TestKindPodsProvider on the host's real policies
// and pods, TestOplabChartNetworkWall (charts) on the chart's. Beyond
// them, TestKindSelfTestFailoverOnPods (internal/engine) runs a lab's
// self-test on a cell, and TestKindChart (charts) serves one from the
// chart's own replicas.
//
// It calls the host's API server through client-go, internal/podexec (the
// kubeconfig and the console, by exec), internal/room (the Source it
// implements), internal/budget (default shares) and the providers package.
// It is called only by internal/cluster, which chooses it by name (pods)
// and fills its Options from the host app.Config names (PodsFrom).
package pods
