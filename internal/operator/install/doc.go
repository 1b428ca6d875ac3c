// Package install installs oplab's reference PostgreSQL operator into a
// cluster from the Helm chart embedded in the oplab binary, with helm's Go
// library (no helm binary), upgrades it and uninstalls it; third-party
// operators' charts (package thirdparty) go in through the same Installer.
//
// On providers whose pods run no container (the embedded provider, which
// declares the HostProcesses capability) the chart's Deployment pod is only
// simulated by KWOK, so the installer also runs the operator as a host
// process beside the cluster. The process authenticates with a token minted
// for the chart's ServiceAccount, so RBAC applies to it exactly as to the
// pod in a real cluster. It runs under hostpod, which keeps it in step with
// the simulated pod (scaling the Deployment to 0 stops it, deleting the pod
// restarts it) and writes its log in the CRI log format to a file that KWOK
// serves as the pod's log (`kubectl logs deploy/pg-operator`). On the pods
// provider (CellOperator) a container of the learner's cell pod plays that
// pod the same way (RunInCell); on kind the chart's pod is a real container
// whose images are loaded into the nodes first.
//
// Where the operator runs is decided once, from the provider's declared
// capabilities, by ForCluster; where its log is read, by OperatorLog
// beside it, so that the page's stream, `oplab logs`, the debrief and the
// grader all read the same lines. The package knows nothing of labs or
// learners, and it is not the operator (internal/operator/controller,
// cmd/pg-operator): it only puts it in place and reports when it is ready.
//
// A reading order:
//
//   - install.go: Options, New, Install (CRDs, the release, the rollout,
//     the host process or the cell's operator) and Uninstall
//   - names.go: where the chart goes (Release, Reference)
//   - cluster.go: ForCluster, an Installer as the provider's capabilities
//     need it; the operator's and PostgreSQL's images
//   - host.go: the operator as a host process under hostpod (Host), its
//     token and kubeconfig, and KWOK's ClusterLogs for its pod's log
//   - cell.go: the operator inside the cell (Cell, RunInCell)
//   - chart.go: LoadChart and Render, which the engine uses to read the
//     chart's RBAC as shipped
//   - kube.go, getter.go: the CRDs applied with server-side apply (helm
//     never upgrades crds/), waits, and helm's client on a rest.Config
//   - operatorlog.go, logs.go: OperatorLog, and PodLog, a pod's log
//     through the API server
//
// Tests install into real embedded clusters: TestInstallHostProcess with
// a stand-in operator (testdata/standin) that logs what its RBAC lets it
// do, TestInstallRealOperator with pg-operator reconciling a
// PostgresCluster of the course. TestChartRulesAreGenerated fails when the
// chart's role differs from controller-gen's (make generate);
// TestChartEmbedsEveryFile and TestChartRenders read the embedded chart.
// TestKindOperatorRunsRealPostgres runs real PostgreSQL on kind, gated as
// every kind test (make test-kind).
//
// It calls internal/cluster (the provider's configuration, host processes
// and images), internal/operator/hostpod (in the cell), internal/oplog and
// the charts package. It is called by internal/engine (a lab's
// installOperator action, the chart's rules, the operator's log),
// internal/app (the operator commands, a session's log),
// internal/operator/thirdparty, internal/cluster/cellpod (RunInCell) and
// the chart's tests (charts/charttest).
package install
