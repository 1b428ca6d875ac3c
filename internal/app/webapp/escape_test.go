package webapp

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/console"
)

// TestEscapeThroughConsole is the learner's side of the escape suite: a
// real session, attacked only through what the lab page offers — console
// lines and the editor's YAML (apply -f -) — with the learner's identity.
// Canaries wait on the host: a file in the data directory, another
// learner's kubeconfig, a file and a directory under /tmp, and a loopback
// port that counts connections. Every attempt must be refused, and every
// canary untouched at the end.
//
// This tests the outer walls (the console's allow-list, the learner's
// RBAC and the fence's admission policies). The cell, the wall behind
// them, is tested with the cluster's admin rights in internal/cluster's
// TestCellWalls, beside a run without cells that shows those attempts
// escape there.
func TestEscapeThroughConsole(t *testing.T) {
	s := newConsoleSession(t)
	can := clustertest.PlantCanaries(t, s.data)

	// The console refuses a line (console.ErrRefused), or the API server
	// answers Forbidden (RBAC or a fence policy).
	forbidden := regexp.MustCompile(`Error from server \(Forbidden\)`)
	for _, a := range []struct {
		name, line, yaml string
	}{
		{"KWOK ClusterLogs reading a host file", "kubectl apply -f -", fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: steal}
spec:
  selector: {matchNamespaces: [default]}
  logs: [{containers: [c], logsFile: %q}]
`, can.File)},
		{"KWOK Logs reading another learner's kubeconfig", "kubectl apply -f -", fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: steal, namespace: default}
spec:
  logs: [{containers: [c], logsFile: %q}]
`, can.Kubeconfig)},
		{"a hostPath volume on a host directory, deleted with its claim", "kubectl apply -f -", fmt.Sprintf(`apiVersion: v1
kind: PersistentVolume
metadata: {name: steal}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Delete
  hostPath: {path: %q}
`, can.TmpDir)},
		{"a webhook calling the host's loopback", "kubectl apply -f -", fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: steal}
webhooks:
- name: steal.example.com
  clientConfig: {url: "https://127.0.0.1:%d/"}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  sideEffects: None
  admissionReviewVersions: [v1]
`, can.Port)},
		{"an aggregated API served by localhost", "kubectl apply -f -", fmt.Sprintf(`apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.steal.example.com}
spec:
  group: steal.example.com
  version: v1
  service: {namespace: default, name: steal, port: %d}
  insecureSkipTLSVerify: true
  groupPriorityMinimum: 1000
  versionPriority: 15
`, can.Port)},
		{"a privileged pod with the host's namespaces and root", "kubectl apply -f -", `apiVersion: v1
kind: Pod
metadata: {name: steal, namespace: default}
spec:
  hostPID: true
  hostNetwork: true
  containers: [{name: c, image: busybox, securityContext: {privileged: true}}]
  volumes: [{name: root, hostPath: {path: /}}]
`},
		{"a forged Event the grader would read", "kubectl apply -f -", `apiVersion: v1
kind: Event
metadata: {name: forged, namespace: default}
involvedObject: {kind: PostgresCluster, name: prod-db, namespace: default}
reason: SwitchoverComplete
message: forged
type: Normal
`},
		{"kubectl against another kubeconfig", "kubectl get pods --kubeconfig " + can.Kubeconfig, ""},
		{"kubectl against the host's loopback", fmt.Sprintf("kubectl get pods --server https://127.0.0.1:%d", can.Port), ""},
		{"kubectl proxy", "kubectl proxy --port 0", ""},
		{"kubectl cp from a host path", "kubectl cp " + can.File + " default/x:/tmp/x", ""},
		{"debug the node", "kubectl debug node/oplab-worker -it --image=busybox", ""},
		{"act as the operator beyond can-i", "kubectl delete pods --all -A --as=system:serviceaccount:oplab-system:pg-operator", ""},
	} {
		out, err := s.run2(t, a.line, a.yaml)
		text := out
		if err != nil {
			text += " " + err.Error()
		}
		if !errors.Is(err, console.ErrRefused) && !forbidden.MatchString(text) {
			t.Errorf("%s: not refused: %q", a.name, strings.TrimSpace(text))
		} else {
			t.Logf("%s: refused: %.160s", a.name, strings.TrimSpace(text))
		}
	}
	if touched := can.Touched(); len(touched) > 0 {
		t.Errorf("canaries touched: %s", strings.Join(touched, "; "))
	}
}

// run2 runs line with yaml as the editor's text.
func (s consoleSession) run2(t *testing.T, line, yaml string) (string, error) {
	t.Helper()
	var out lockedBuffer
	err := s.web.Run(t.Context(), s.id, line, yaml, &out)
	return out.String(), err
}
