package console

import (
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line, want string
		secrets    []string
	}{
		// create secret generic: the key stays, its value goes, in every
		// spelling pflag reads.
		{"kubectl create secret generic db --from-literal=password=hunter2",
			"kubectl create secret generic db --from-literal=password=***", []string{"hunter2"}},
		{"kubectl create secret generic db --from-literal password=hunter2 --from-literal=user=ada",
			"kubectl create secret generic db --from-literal password=*** --from-literal=user=***", []string{"hunter2", "ada"}},
		{`kubectl create secret generic db --from-literal password="correct horse" -n lab`,
			"kubectl create secret generic db --from-literal password=*** -n lab", []string{"correct horse"}},
		{`kubectl create secret generic db --from-literal='password=s3cr3t!' --dry-run=client -o yaml`,
			"kubectl create secret generic db --from-literal=password=*** --dry-run=client -o yaml", []string{"s3cr3t!"}},
		{`k create secret generic db "--from-literal=pass word=it's me"`,
			`k create secret generic db '--from-literal=pass word=***'`, []string{"it's me"}},
		{`kubectl create secret generic db --from-literal=token=a\ b`,
			"kubectl create secret generic db --from-literal=token=***", []string{"a b"}},
		{"kubectl create secret generic db --from-literal=onlyvalue",
			"kubectl create secret generic db --from-literal=***", []string{"onlyvalue"}},
		{"kubectl create configmap cfg --from-literal=mode=fast",
			"kubectl create configmap cfg --from-literal=mode=***", []string{"fast"}},
		// create secret docker-registry.
		{"kubectl create secret docker-registry reg --docker-server=r.example --docker-username=ada --docker-password=hunter2 --docker-email=a@example.com",
			"kubectl create secret docker-registry reg --docker-server=r.example --docker-username=ada --docker-password=*** --docker-email=a@example.com", []string{"hunter2"}},
		{"kubectl create secret docker-registry reg --docker-password hunter2",
			"kubectl create secret docker-registry reg --docker-password ***", []string{"hunter2"}},
		// Credentials the console refuses are recorded masked all the same.
		{"kubectl get pods --token=eyJhbGciOi.abc.def", "kubectl get pods --token=***", []string{"eyJhbGciOi.abc.def"}},
		{"kubectl get pods --token eyJhbGciOi.abc.def -A", "kubectl get pods --token *** -A", []string{"eyJhbGciOi.abc.def"}},
		{"kubectl --password=hunter2 --username=admin get pods", "kubectl --password=*** --username=admin get pods", []string{"hunter2"}},
		{"kubectl get pods --client-key=/root/.kube/admin.key", "kubectl get pods --client-key=***", []string{"/root/.kube/admin.key"}},
		{"kubectl get pods --token=", "kubectl get pods --token=", nil},
		// Environment values with credential names.
		{"kubectl set env deploy/app DB_PASSWORD=hunter2 LOG_LEVEL=debug",
			"kubectl set env deploy/app DB_PASSWORD=*** LOG_LEVEL=debug", []string{"hunter2"}},
		{"kubectl set env deploy/app -e API_TOKEN=abc123 --env=MODE=prod",
			"kubectl set env deploy/app -e API_TOKEN=*** --env=MODE=prod", []string{"abc123"}},
		{"kubectl set env deploy/app -eAWS_SECRET_ACCESS_KEY=abc123",
			"kubectl set env deploy/app -eAWS_SECRET_ACCESS_KEY=***", []string{"abc123"}},
		{"kubectl run tmp --image=busybox --env=PGPASSWORD=hunter2 --env=PGUSER=postgres",
			"kubectl run tmp --image=busybox --env=PGPASSWORD=*** --env=PGUSER=postgres", []string{"hunter2"}},
		// A patch of a Secret, whichever way it is named; a patch of
		// anything else is left.
		{`kubectl patch secret db -p '{"stringData":{"password":"hunter2"}}'`,
			"kubectl patch secret db -p ***", []string{`{"stringData":{"password":"hunter2"}}`}},
		{`kubectl patch --type=merge -p='{"data":{"password":"aHVudGVyMg=="}}' secrets/db`,
			"kubectl patch --type=merge -p=*** secrets/db", []string{`{"data":{"password":"aHVudGVyMg=="}}`}},
		{`kubectl patch pgc demo --type merge -p '{"spec":{"replicas":3}}'`,
			`kubectl patch pgc demo --type merge -p '{"spec":{"replicas":3}}'`, nil},
		// Lines the console refuses: shell syntax, an unbalanced quote.
		{"kubectl create secret generic db --from-literal=password=hunter2 | tee /tmp/x",
			"kubectl create secret generic db --from-literal=password=*** | tee /tmp/x", []string{"hunter2"}},
		{"kubectl create secret generic db --from-literal='password=hunter2 oops",
			"kubectl create secret generic db --from-literal=password=***", []string{"hunter2 oops"}},
		{"kubectl get pods;kubectl get pods --token=abc", "kubectl get pods;kubectl get pods --token=***", []string{"abc"}},
		// Nothing secret: the line is left as typed, quotes and all.
		{`kubectl get pods -o jsonpath='{.items[*].metadata.name}'`, `kubectl get pods -o jsonpath='{.items[*].metadata.name}'`, nil},
		{"kubectl get pods -L databases.example.com/role", "kubectl get pods -L databases.example.com/role", nil},
		{"kubectl logs demo-0 -p", "kubectl logs demo-0 -p", nil},
		{"kubectl auth can-i update statefulsets --as=system:serviceaccount:oplab-system:pg-operator -n default",
			"kubectl auth can-i update statefulsets --as=system:serviceaccount:oplab-system:pg-operator -n default", nil},
		{"kubectl create deployment web --image=nginx -- sleep 3600", "kubectl create deployment web --image=nginx -- sleep 3600", nil},
		// A container's command: its environment and connection strings.
		{"kubectl create deployment web --image=postgres -- env PGPASSWORD=hunter2 PGUSER=app psql",
			"kubectl create deployment web --image=postgres -- env PGPASSWORD=*** PGUSER=app psql", []string{"hunter2"}},
		{"kubectl exec demo-0 -- psql postgresql://postgres:hunter2@localhost:5432/app -c 'select 1'",
			"kubectl exec demo-0 -- psql postgresql://postgres:***@localhost:5432/app -c 'select 1'", []string{"hunter2"}},
		{"kubectl run tmp --image=app --env=DATABASE_URL=postgres://app:hunter2@demo-rw/app",
			"kubectl run tmp --image=app --env=DATABASE_URL=postgres://app:***@demo-rw/app", []string{"hunter2"}},
		{"kubectl get --raw /api/v1/namespaces", "kubectl get --raw /api/v1/namespaces", nil},
	}
	for _, tt := range tests {
		got, secrets := Redact(tt.line)
		if got != tt.want {
			t.Errorf("Redact(%q):\n got %q\nwant %q", tt.line, got, tt.want)
		}
		if !slices.Equal(secrets, tt.secrets) {
			t.Errorf("Redact(%q) secrets: got %q, want %q", tt.line, secrets, tt.secrets)
		}
		for _, s := range tt.secrets {
			if len(s) >= 3 && strings.Contains(got, s) {
				t.Errorf("Redact(%q): got %q, which still holds %q", tt.line, got, s)
			}
		}
	}
}

// TestRedactedLinesStillParse: a redacted line the console accepted is
// still a line it accepts, naming the same command, so that the timeline
// reads as what ran.
func TestRedactedLinesStillParse(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"kubectl create secret generic db --from-literal=password=hunter2 --from-literal user=ada",
		`kubectl create secret generic db "--from-literal=pass word=it's me"`,
		"kubectl create secret docker-registry reg --docker-password hunter2",
		`kubectl patch secret db -p '{"stringData":{"password":"hunter2"}}'`,
		"kubectl set env deploy/app DB_PASSWORD=hunter2 -e API_KEY=x",
	} {
		before, err := Parse(line)
		if err != nil {
			t.Fatalf("Parse(%q): %v", line, err)
		}
		red, _ := Redact(line)
		after, err := Parse(red)
		if err != nil {
			t.Errorf("Parse(Redact(%q)) = Parse(%q): %v", line, red, err)
			continue
		}
		if !slices.Equal(after.Path, before.Path) || len(after.Args) != len(before.Args) {
			t.Errorf("Redact(%q) = %q: got %q with %d words, want %q with %d", line, red, after.Path, len(after.Args), before.Path, len(before.Args))
		}
	}
}

// TestScanWordsReadsAsSplit: for the lines the console accepts, the
// redaction's tolerant reader finds the same words as Split, so that a
// secret is looked for where kubectl will find it.
func TestScanWordsReadsAsSplit(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"kubectl get pods",
		`kubectl get pods -o jsonpath='{.items[*].metadata.name}'`,
		`kubectl get pods -l 'app in (a,b)' --field-selector status.phase=Running`,
		`kubectl create secret generic db --from-literal="password=a \"quoted\" \$value"`,
		`kubectl create secret generic db --from-literal=pass\ word=x\'y`,
		`kubectl create secret generic db --from-literal='it'\''s'`,
		`kubectl create secret generic db --from-literal=$'a\'b c'`,
		"kubectl annotate pgc demo note=\"two\\\nlines\"",
		`kubectl patch secret db -p "{\"data\":{}}"`,
	} {
		want, err := Split(line)
		if err != nil {
			t.Fatalf("Split(%q): %v", line, err)
		}
		var got []string
		for _, w := range scanWords(line) {
			got = append(got, w.text)
		}
		if !slices.Equal(got, want) {
			t.Errorf("scanWords(%q): got %q, want %q", line, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text    string
		secrets []string
		want    string
	}{
		{"cannot read the word --from-literal=pw=hunter2x", []string{"hunter2x"}, "cannot read the word --from-literal=pw=***"},
		{"unknown flag --x", []string{"x"}, "unknown flag --x"}, // too short to replace
		{"", []string{"hunter2"}, ""},
	} {
		if got := Scrub(tt.text, tt.secrets); got != tt.want {
			t.Errorf("Scrub(%q, %q): got %q, want %q", tt.text, tt.secrets, got, tt.want)
		}
	}
}
