package console

import (
	"errors"
	"slices"
	"testing"
)

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line   string
		path   []string
		args   []string
		stdin  bool
		follow bool
	}{
		{line: "kubectl get pods", path: []string{"get"}, args: []string{"get", "pods"}},
		{line: "k get po -A", path: []string{"get"}, args: []string{"get", "po", "-A"}},
		{line: "get pods", path: []string{"get"}, args: []string{"get", "pods"}},
		{line: "kubectl", args: []string{}},
		{line: "kubectl --help", args: []string{"--help"}},
		{line: "kubectl help get", path: []string{"help"}, args: []string{"help", "get"}},
		{line: "kubectl -n lab get pods -L databases.example.com/role", path: []string{"get"}, args: []string{"-n", "lab", "get", "pods", "-L", "databases.example.com/role"}},
		{line: "kubectl get pods -w", path: []string{"get"}, args: []string{"get", "pods", "-w"}, follow: true},
		{line: "kubectl get pods --watch=false", path: []string{"get"}, args: []string{"get", "pods", "--watch=false"}},
		{line: "kubectl get pgc -o yaml", path: []string{"get"}, args: []string{"get", "pgc", "-o", "yaml"}},
		{line: "kubectl get pods -owide", path: []string{"get"}, args: []string{"get", "pods", "-owide"}},
		{line: `kubectl get pods -o jsonpath='{.items[*].metadata.name}'`, path: []string{"get"}, args: []string{"get", "pods", "-o", "jsonpath={.items[*].metadata.name}"}},
		{line: `kubectl get pods -o custom-columns=NAME:.metadata.name,ROLE:.metadata.labels.role`, path: []string{"get"}, args: []string{"get", "pods", "-o", "custom-columns=NAME:.metadata.name,ROLE:.metadata.labels.role"}},
		{line: `kubectl get pods -l 'app in (a,b)' --field-selector status.phase=Running --sort-by .metadata.name`, path: []string{"get"}, args: []string{"get", "pods", "-l", "app in (a,b)", "--field-selector", "status.phase=Running", "--sort-by", ".metadata.name"}},
		{line: "kubectl get --raw /api/v1/namespaces", path: []string{"get"}, args: []string{"get", "--raw", "/api/v1/namespaces"}},
		{line: "kubectl get --raw=/readyz?verbose", path: []string{"get"}, args: []string{"get", "--raw=/readyz?verbose"}},
		{line: "kubectl get --raw /openapi/v3", path: []string{"get"}, args: []string{"get", "--raw", "/openapi/v3"}},
		{line: "kubectl describe pgc demo", path: []string{"describe"}, args: []string{"describe", "pgc", "demo"}},
		{line: "kubectl logs deploy/pg-operator -n pg-operator-system -f --tail 20", path: []string{"logs"}, args: []string{"logs", "deploy/pg-operator", "-n", "pg-operator-system", "-f", "--tail", "20"}, follow: true},
		{line: "kubectl logs demo-0 -c postgres --previous", path: []string{"logs"}, args: []string{"logs", "demo-0", "-c", "postgres", "--previous"}},
		{line: "kubectl logs -l app=demo --tail=-1", path: []string{"logs"}, args: []string{"logs", "-l", "app=demo", "--tail=-1"}},
		{line: "kubectl explain pgc.spec --recursive", path: []string{"explain"}, args: []string{"explain", "pgc.spec", "--recursive"}},
		{line: "kubectl api-resources --api-group=databases.example.com -o wide", path: []string{"api-resources"}, args: []string{"api-resources", "--api-group=databases.example.com", "-o", "wide"}},
		{line: "kubectl auth can-i --list --as=system:serviceaccount:oplab-system:pg-operator -n default", path: []string{"auth", "can-i"}, args: []string{"auth", "can-i", "--list", "--as=system:serviceaccount:oplab-system:pg-operator", "-n", "default"}},
		{line: "kubectl auth can-i patch statefulsets --as=system:serviceaccount:oplab-system:pg-operator -n default", path: []string{"auth", "can-i"}, args: []string{"auth", "can-i", "patch", "statefulsets", "--as=system:serviceaccount:oplab-system:pg-operator", "-n", "default"}},
		{line: "kubectl auth can-i get pods --as alice --as-group=devs", path: []string{"auth", "can-i"}, args: []string{"auth", "can-i", "get", "pods", "--as", "alice", "--as-group=devs"}},
		{line: "kubectl api-versions", path: []string{"api-versions"}, args: []string{"api-versions"}},
		{line: "kubectl version -o json", path: []string{"version"}, args: []string{"version", "-o", "json"}},
		{line: "kubectl cluster-info", path: []string{"cluster-info"}, args: []string{"cluster-info"}},
		{line: "kubectl top pods -A", path: []string{"top", "pods"}, args: []string{"top", "pods", "-A"}},
		{line: "kubectl events --for pod/demo-0 -w", path: []string{"events"}, args: []string{"events", "--for", "pod/demo-0", "-w"}, follow: true},
		{line: "kubectl apply -f -", path: []string{"apply"}, args: []string{"apply", "-f", "-"}, stdin: true},
		{line: "kubectl apply -f - --dry-run=server", path: []string{"apply"}, args: []string{"apply", "-f", "-", "--dry-run=server"}, stdin: true},
		{line: "kubectl apply --filename=- --server-side --force-conflicts", path: []string{"apply"}, args: []string{"apply", "--filename=-", "--server-side", "--force-conflicts"}, stdin: true},
		{line: "kubectl create -f -", path: []string{"create"}, args: []string{"create", "-f", "-"}, stdin: true},
		{line: "kubectl replace -f - --force", path: []string{"replace"}, args: []string{"replace", "-f", "-", "--force"}, stdin: true},
		{line: "kubectl diff -f -", path: []string{"diff"}, args: []string{"diff", "-f", "-"}, stdin: true},
		{line: "kubectl create namespace demo --dry-run=client -o yaml", path: []string{"create", "namespace"}, args: []string{"create", "namespace", "demo", "--dry-run=client", "-o", "yaml"}},
		{line: "kubectl create secret generic s --from-literal=password=x", path: []string{"create", "secret", "generic"}, args: []string{"create", "secret", "generic", "s", "--from-literal=password=x"}},
		{line: "kubectl create rolebinding rb --clusterrole=view --user=alice", path: []string{"create", "rolebinding"}, args: []string{"create", "rolebinding", "rb", "--clusterrole=view", "--user=alice"}},
		{line: "kubectl create deployment web --image=nginx -- sleep 10", path: []string{"create", "deployment"}, args: []string{"create", "deployment", "web", "--image=nginx", "--", "sleep", "10"}},
		{line: "kubectl delete pod demo-0 --wait=false", path: []string{"delete"}, args: []string{"delete", "pod", "demo-0", "--wait=false"}},
		{line: "kubectl delete -f -", path: []string{"delete"}, args: []string{"delete", "-f", "-"}, stdin: true},
		{line: `kubectl patch pgc demo --type merge -p '{"spec":{"replicas":3}}'`, path: []string{"patch"}, args: []string{"patch", "pgc", "demo", "--type", "merge", "-p", `{"spec":{"replicas":3}}`}},
		{line: "kubectl scale pgc demo --replicas=3", path: []string{"scale"}, args: []string{"scale", "pgc", "demo", "--replicas=3"}},
		{line: "kubectl label pod demo-0 tier=db --overwrite", path: []string{"label"}, args: []string{"label", "pod", "demo-0", "tier=db", "--overwrite"}},
		{line: "kubectl annotate pgc demo note=hi", path: []string{"annotate"}, args: []string{"annotate", "pgc", "demo", "note=hi"}},
		{line: "kubectl rollout status sts/demo", path: []string{"rollout", "status"}, args: []string{"rollout", "status", "sts/demo"}, follow: true},
		{line: "kubectl rollout status sts/demo --watch=false", path: []string{"rollout", "status"}, args: []string{"rollout", "status", "sts/demo", "--watch=false"}},
		{line: "kubectl rollout history deploy/pg-operator -n pg-operator-system", path: []string{"rollout", "history"}, args: []string{"rollout", "history", "deploy/pg-operator", "-n", "pg-operator-system"}},
		{line: "kubectl rollout restart deploy/x", path: []string{"rollout", "restart"}, args: []string{"rollout", "restart", "deploy/x"}},
		{line: "kubectl rollout undo deploy/x --to-revision=1", path: []string{"rollout", "undo"}, args: []string{"rollout", "undo", "deploy/x", "--to-revision=1"}},
		{line: "kubectl set image deploy/x app=nginx:1.27", path: []string{"set", "image"}, args: []string{"set", "image", "deploy/x", "app=nginx:1.27"}},
		{line: "kubectl auth can-i list pods -n lab", path: []string{"auth", "can-i"}, args: []string{"auth", "can-i", "list", "pods", "-n", "lab"}},
		{line: "kubectl auth can-i --list", path: []string{"auth", "can-i"}, args: []string{"auth", "can-i", "--list"}},
		{line: "kubectl auth whoami", path: []string{"auth", "whoami"}, args: []string{"auth", "whoami"}},
		{line: "kubectl wait --for=condition=Ready pgc/demo --timeout=60s", path: []string{"wait"}, args: []string{"wait", "--for=condition=Ready", "pgc/demo", "--timeout=60s"}, follow: true},
		{line: "kubectl get pods -v=6", path: []string{"get"}, args: []string{"get", "pods", "-v=6"}},
		{line: "kubectl run tmp --image=busybox --restart=Never -- echo hi", path: []string{"run"}, args: []string{"run", "tmp", "--image=busybox", "--restart=Never", "--", "echo", "hi"}},
		{line: "kubectl drain node-1 --ignore-daemonsets", path: []string{"drain"}, args: []string{"drain", "node-1", "--ignore-daemonsets"}},
		{line: "kubectl apply view-last-applied pgc/demo", path: []string{"apply", "view-last-applied"}, args: []string{"apply", "view-last-applied", "pgc/demo"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd, err := Parse(tt.line)
			if err != nil {
				t.Fatalf("Parse(%q): got error %q, want accepted", tt.line, err)
			}
			if !slices.Equal(cmd.Path, tt.path) {
				t.Errorf("path: got %q, want %q", cmd.Path, tt.path)
			}
			if !slices.Equal(cmd.Args, tt.args) {
				t.Errorf("args: got %q, want %q", cmd.Args, tt.args)
			}
			if cmd.Stdin != tt.stdin {
				t.Errorf("stdin: got %v, want %v", cmd.Stdin, tt.stdin)
			}
			if cmd.Follow != tt.follow {
				t.Errorf("follow: got %v, want %v", cmd.Follow, tt.follow)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	own := "the console always talks to your own lab cluster with your own credentials"
	tests := []struct {
		line, want string
	}{
		{"kubectl apply -f deploy.yaml", "-f deploy.yaml: the console cannot read files on the server; put the YAML in the YAML editor and use -f -"},
		{"kubectl apply --filename=/etc/passwd", "--filename /etc/passwd: the console cannot read files on the server; put the YAML in the YAML editor and use -f -"},
		{"kubectl get -f /root/secret.yaml", "-f /root/secret.yaml: the console cannot read files on the server; put the YAML in the YAML editor and use -f -"},
		{"kubectl apply", "kubectl apply reads its YAML from the YAML editor: use kubectl apply -f -"},
		{"kubectl apply -k ./overlay", "-k/--kustomize reads a directory on the server: put the YAML in the YAML editor and use -f -"},
		{"kubectl apply --kustomize=.", "-k/--kustomize reads a directory on the server: put the YAML in the YAML editor and use -f -"},
		{"kubectl create configmap c --from-file=/etc/passwd", "--from-file reads files on the server: use --from-literal=key=value, or write the object in the YAML editor"},
		{"kubectl create secret generic s --from-env-file=.env", "--from-env-file reads a file on the server: use --from-literal=key=value"},
		{"kubectl create secret tls t --cert=a --key=b", "kubectl create secret tls reads certificate files on the server: write the Secret in the YAML editor and use kubectl apply -f -"},
		{"kubectl get pods --kubeconfig=/root/.kube/config", "--kubeconfig is not available: " + own},
		{"kubectl get pods --kubeconfig /root/.kube/config", "--kubeconfig is not available: " + own},
		{"kubectl --server=https://10.0.0.1:6443 get pods", "--server is not available: " + own},
		{"kubectl get pods -s https://10.0.0.1", "--server is not available: " + own},
		{"kubectl get pods --token=abc", "--token is not available: " + own},
		{"kubectl get pods --context=other", "--context is not available: " + own},
		{"kubectl get pods --cluster=other", "--cluster is not available: " + own},
		{"kubectl get pods --user=admin", "--user is not available: " + own},
		{"kubectl get pods --certificate-authority=/ca.crt", "--certificate-authority is not available: " + own},
		{"kubectl get pods --client-key=/k", "--client-key is not available: " + own},
		{"kubectl get pods --client-certificate=/c", "--client-certificate is not available: " + own},
		{"kubectl get pods --insecure-skip-tls-verify", "--insecure-skip-tls-verify is not available: " + own},
		{"kubectl get pods --cache-dir=/tmp/x", "--cache-dir is not available: the console does not write files on the server"},
		{"kubectl get pods --kuberc=/x", "--kuberc is not available: the console does not read files on the server"},
		{"kubectl get pods -o go-template-file=/etc/passwd", "-o go-template-file reads a file on the server: give the template inline with -o go-template='…'"},
		{"kubectl get pods -o jsonpath-file=/x", "-o jsonpath-file reads a file on the server: give the template inline with -o jsonpath='…'"},
		{"kubectl get pods -o custom-columns-file=/x", "-o custom-columns-file reads a file on the server: give the template inline with -o custom-columns='…'"},
		{"kubectl get pods -o templatefile=/x", "-o templatefile reads a file on the server: give the template inline with -o go-template='…'"},
		{"kubectl get pods -o xml", "-o xml: use -o yaml, json, wide, name, jsonpath='…', custom-columns='…' or go-template='…'"},
		{"kubectl get --raw http://169.254.169.254/latest", "--raw http://169.254.169.254/latest: give a path on the API server, such as /api/v1/namespaces or /readyz?verbose"},
		{"kubectl get --raw //evil.example/x", "--raw //evil.example/x: give a path on the API server, such as /api/v1/namespaces or /readyz?verbose"},
		{"kubectl get --raw /api/../../etc/passwd", "--raw /api/../../etc/passwd: paths with .. are not allowed"},
		{"kubectl get --raw /api/%2e%2e/x", "--raw /api/%2e%2e/x: paths with .. are not allowed"},
		{"kubectl get --raw /metrics", "--raw /metrics: only the API server's paths are allowed (/api, /apis, /healthz, /readyz, /livez, /version, /openapi)"},
		{"kubectl get --raw /api/v1/namespaces/default/services/web:80/proxy/", "--raw /api/v1/namespaces/default/services/web:80/proxy/: the API server's proxy paths are not available in the console"},
		{"kubectl delete --raw /api/v1/namespaces/x", "--raw is allowed with kubectl get only"},
		{"kubectl cp demo-0:/etc/passwd ./x", "kubectl cp copies files to and from the server: not available in the console"},
		{"kubectl proxy", "kubectl proxy opens a port on the server: not available in the console; use kubectl get --raw /api/…"},
		{"kubectl port-forward svc/demo-rw 5432", "kubectl port-forward opens a port on the server: not available in the console"},
		{"kubectl attach demo-0", "kubectl attach needs a terminal, which the console does not have: read a pod's output with kubectl logs -f"},
		{"kubectl exec demo-0 -- psql", "kubectl exec is not available: this lab's cluster runs no containers (its pods are simulated)"},
		{"kubectl exec -it demo-0 -- sh", "kubectl exec is not available: this lab's cluster runs no containers (its pods are simulated)"},
		{"kubectl debug demo-0 --image=busybox", "kubectl debug is not available: this lab's cluster runs no containers (its pods are simulated)"},
		{"kubectl run tmp -it --image=busybox", "kubectl run -i/-t/--attach needs a terminal, which the console does not have: run it without them and read its output with kubectl logs"},
		{"kubectl run tmp --rm --image=busybox", "kubectl run -i/-t/--attach needs a terminal, which the console does not have: run it without them and read its output with kubectl logs"},
		{"kubectl edit pgc demo", yamlEditor},
		{"kubectl create -f - --edit", yamlEditor},
		{"kubectl apply edit-last-applied pgc/demo", yamlEditor},
		{"kubectl plugin list", "kubectl plugins are not available in the console"},
		{"kubectl cnpg status demo", `unknown command "cnpg": the console runs kubectl's own commands (see kubectl help); plugins are not available`},
		{"sudo kubectl get pods", `unknown command "sudo": the console runs kubectl's own commands (see kubectl help); plugins are not available`},
		{"kubectl config view", "kubectl config is not available: the console is already connected to your lab cluster"},
		{"kubectl completion bash", "kubectl completion is for shells: the console completes with the Tab key"},
		{"kubectl alpha kuberc", "kubectl alpha commands are not available in the console"},
		{"kubectl kustomize .", "kubectl kustomize reads a directory on the server: not available in the console"},
		{"kubectl cluster-info dump", "kubectl cluster-info dump is not available in the console: use get, describe and logs"},
		{"kubectl rollout", "kubectl rollout needs a subcommand: see kubectl rollout --help"},
		{"kubectl rollout sideways deploy/x", `unknown subcommand "sideways" for kubectl rollout: see kubectl rollout --help`},
		{"kubectl get pods --profile=cpu", "--profile is not available in the console"},
		{"kubectl get pods --now-what", `flag --now-what is not allowed in the console for kubectl get (see kubectl get --help)`},
		{"kubectl get pods -Z", `flag -Z is not allowed in the console for kubectl get (see kubectl get --help)`},
		{"kubectl delete pods --all -i", "kubectl delete -i asks for confirmation on a terminal, which the console does not have"},
		{"kubectl patch pgc demo --patch-file=/x", "--patch-file reads a file on the server: give the patch inline with -p '…'"},
		{"kubectl apply -f - --prune -l a=b", "kubectl apply --prune is not available in the console: delete objects with kubectl delete"},
		{"kubectl get pods --dry-run=yes", "flag --dry-run is not allowed in the console for kubectl get (see kubectl get --help)"},
		{"kubectl apply -f - --dry-run=yes", "--dry-run=yes: use --dry-run=server, client or none"},
		{"kubectl get pods -v=99", "-v=99: give a log level from 0 to 10"},
		{"kubectl get pods -- --kubeconfig=/x", "kubectl get takes no command after --"},
		{"kubectl get pods | grep demo", "pipes (|) are not supported: the console runs kubectl only, not a shell; filter with -l, --field-selector, -o jsonpath or --sort-by"},
		{"kubectl get pods > /tmp/out", "redirections (<, >) are not supported: output appears here; for input put the YAML in the editor and use -f -"},
		{"kubectl get pods; rm -rf /", "one command at a time: ; and new lines are not supported (the console is not a shell)"},
		{"kubectl get pods && echo ok", "one command at a time: &&, || and ; are not supported (the console is not a shell)"},
		{"kubectl get pods -n $NS", "variables ($NAME) are not expanded: the console is not a shell; type the value itself (quote a literal $ with '…')"},
		{"kubectl get pods -n $(cat /etc/hostname)", "command substitution ($(…) or `…`) is not supported: the console runs kubectl only, not a shell"},
		{"", "empty command: type a kubectl command, for example: kubectl get pods"},
		{"kubectl get pods -l 'app=demo", "unbalanced quote: close the quote or quote the whole argument with '…'"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd, err := Parse(tt.line)
			if err == nil {
				t.Fatalf("Parse(%q): got accepted %q, want refused with %q", tt.line, cmd.Args, tt.want)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("got error %v (%T), want a *RefusedError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("got message\n  %q\nwant\n  %q", err.Error(), tt.want)
			}
		})
	}
}

func TestPolicyContainers(t *testing.T) {
	t.Parallel()
	p := Policy{Containers: true}
	tests := []struct {
		line, refused string
		stdin         bool
	}{
		{line: "kubectl exec demo-0 -c postgres -- psql -c 'select 1'"},
		{line: "kubectl exec -i demo-0 -- psql", stdin: true},
		{line: "kubectl debug demo-0 --image=busybox --target=postgres"},
		{line: "kubectl exec -it demo-0 -- sh", refused: "kubectl exec -t needs a terminal, which the console does not have: run it without -t"},
		{line: "kubectl debug -it demo-0 --image=busybox", refused: "kubectl debug -t needs a terminal, which the console does not have: run it without -t and read its output with kubectl logs"},
		{line: "kubectl attach demo-0", refused: "kubectl attach needs a terminal, which the console does not have: read a pod's output with kubectl logs -f"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd, err := p.Parse(tt.line)
			if tt.refused != "" {
				if err == nil || err.Error() != tt.refused {
					t.Fatalf("got %v, want refused with %q", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want accepted", err)
			}
			if cmd.Stdin != tt.stdin {
				t.Errorf("stdin: got %v, want %v", cmd.Stdin, tt.stdin)
			}
		})
	}
}

// TestIdentityFlagsRefused: no flag that changes who the command acts as
// or which cluster it reaches is accepted, in either spelling, on any
// command; impersonation only on kubectl auth can-i, which is read-only.
func TestIdentityFlagsRefused(t *testing.T) {
	t.Parallel()
	own := "the console always talks to your own lab cluster with your own credentials"
	commands := []string{"get pods", "apply -f -", "delete pod demo-0", "create namespace x", "auth whoami", "logs demo-0 -f", "auth can-i get pods"}
	flags := map[string]string{
		"as-uid": "--as-uid is not available: " + own, "as-user-extra": "--as-user-extra is not available: " + own,
		"token": "--token is not available: " + own, "kubeconfig": "--kubeconfig is not available: " + own,
		"server": "--server is not available: " + own, "user": "--user is not available: " + own,
		"cluster": "--cluster is not available: " + own, "context": "--context is not available: " + own,
		"certificate-authority":    "--certificate-authority is not available: " + own,
		"client-certificate":       "--client-certificate is not available: " + own,
		"client-key":               "--client-key is not available: " + own,
		"insecure-skip-tls-verify": "--insecure-skip-tls-verify is not available: " + own,
		"tls-server-name":          "--tls-server-name is not available: " + own,
		"username":                 "--username is not available: " + own, "password": "--password is not available: " + own,
	}
	for flag, want := range flags {
		for _, command := range commands {
			for _, line := range []string{
				"kubectl " + command + " --" + flag + "=x",
				"kubectl " + command + " --" + flag + " x",
				"kubectl --" + flag + "=x " + command,
			} {
				cmd, err := Parse(line)
				if err == nil {
					t.Errorf("Parse(%q): got accepted %q, want refused", line, cmd.Args)
					continue
				}
				if !errors.Is(err, ErrRefused) || err.Error() != want {
					t.Errorf("Parse(%q): got %q, want %q", line, err, want)
				}
			}
		}
	}
	for _, flag := range []string{"as", "as-group"} {
		want := "--" + flag + " is allowed with kubectl auth can-i only, after it: kubectl auth can-i VERB RESOURCE --" + flag + "=NAME"
		for _, command := range commands {
			canI := command == "auth can-i get pods"
			for _, line := range []string{
				"kubectl " + command + " --" + flag + "=system:serviceaccount:oplab-system:pg-operator",
				"kubectl " + command + " --" + flag + " system:masters",
			} {
				cmd, err := Parse(line)
				switch {
				case canI && err != nil:
					t.Errorf("Parse(%q): got %v, want accepted", line, err)
				case canI && !slices.Equal(cmd.Path, []string{"auth", "can-i"}):
					t.Errorf("Parse(%q): path got %q, want auth can-i", line, cmd.Path)
				case !canI && err == nil:
					t.Errorf("Parse(%q): got accepted %q, want refused", line, cmd.Args)
				case !canI && err.Error() != want:
					t.Errorf("Parse(%q): got %q, want %q", line, err, want)
				}
			}
		}
		// Before the subcommand the flag is read as kubectl's own, for
		// any command: refused, with where to put it.
		if _, err := Parse("kubectl --" + flag + "=alice auth can-i get pods"); err == nil || err.Error() != want {
			t.Errorf("--%s before auth can-i: got %v, want %q", flag, err, want)
		}
	}
}
