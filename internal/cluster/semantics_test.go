package cluster_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestSemantics checks, on one embedded cluster, the API semantics the labs
// rely on. Each subtest works in a namespace of its own.
func TestSemantics(t *testing.T) {
	c := clustertest.New(t)
	tests := []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, cfg *rest.Config)
	}{
		{"StatefulSetWithVolumes", testStatefulSet},
		{"RBACForbidsThenAllows", testRBAC},
		{"ResourceQuotaRejectsPods", testQuota},
		{"MissingStorageClassStaysPending", testMissingStorageClass},
		{"GarbageCollection", testGarbageCollection},
		{"BootstrapPolicy", testBootstrapPolicy},
		{"LoopbackCertificate", testLoopbackCertificate},
		{"OpenAPIDocuments", testOpenAPIDocuments},
		{"MutatingPolicyOnCRD", testMutatingPolicyOnCRD},
		{"AdmissionPolicyVariables", testAdmissionPolicyVariables},
		{"ConflictWindow", testConflictWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ns := strings.ToLower(tt.name)
			c.Namespace(t, ns)
			tt.fn(t, ctx, c.Client, ns, c.Config)
		})
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func statefulSet(name string, replicas int32, withVolume bool) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "postgres",
					Image: "postgres:16",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
					}, Limits: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
					}},
				}}},
			},
		},
	}
	if withVolume {
		sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}}
		sts.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}}
	}
	return sts
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func testStatefulSet(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, _ *rest.Config) {
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, statefulSet("db", 3, true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "3 Ready pods", func(ctx context.Context) (bool, error) {
		for i := range 3 {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("db-%d", i), metav1.GetOptions{})
			if err != nil || !podReady(p) {
				return false, nil
			}
		}
		return true, nil
	})
	for i := range 3 {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("data-db-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			t.Errorf("PVC %s phase: got %s, want Bound", pvc.Name, pvc.Status.Phase)
		}
	}
	old, err := cs.CoreV1().Pods(ns).Get(ctx, "db-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "db-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "db-1 recreated and Ready", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "db-1", metav1.GetOptions{})
		return err == nil && p.UID != old.UID && podReady(p), nil
	})
}

func testRBAC(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, admin *rest.Config) {
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "operator"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	saClient := kubernetes.NewForConfigOrDie(cfg)

	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "operator"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "operator"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "list allowed once the binding is seen", func(ctx context.Context) (bool, error) {
		_, err := saClient.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil // the authorizer's cache has not seen the binding yet
		}
		return err == nil, err
	})
	_, err = saClient.AppsV1().StatefulSets(ns).Create(ctx, statefulSet("denied", 1, false), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("create without the verb: got %v, want 403 Forbidden", err)
	}
	role.Rules[0].Verbs = append(role.Rules[0].Verbs, "create")
	if _, err := cs.RbacV1().Roles(ns).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "create allowed once granted", func(ctx context.Context) (bool, error) {
		_, err := saClient.AppsV1().StatefulSets(ns).Create(ctx, statefulSet("allowed", 1, false), metav1.CreateOptions{})
		if apierrors.IsForbidden(err) {
			return false, nil // the authorizer's cache has not seen the update yet
		}
		return err == nil, err
	})
}

func testQuota(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, _ *rest.Config) {
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "quota status", func(ctx context.Context) (bool, error) {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(ctx, quota.Name, metav1.GetOptions{})
		return err == nil && q.Status.Hard != nil, nil
	})
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, statefulSet("db", 3, false), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var msg string
	waitFor(t, ctx, "a FailedCreate event saying exceeded quota", func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "exceeded quota") {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if !strings.Contains(msg, "db-2") {
		t.Errorf("FailedCreate message %q does not name the third pod db-2", msg)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 2 {
		t.Errorf("pods: got %d, want 2 (the quota)", len(pods.Items))
	}
}

func testMissingStorageClass(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, _ *rest.Config) {
	pvc := func(name string, class *string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: class,
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
	}
	// The control: the default class binds, so Pending below is the missing
	// class and not a broken provisioner.
	for _, c := range []*corev1.PersistentVolumeClaim{pvc("missing", ptr.To("fast-ssd")), pvc("default", nil)} {
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the default-class claim Bound", func(ctx context.Context) (bool, error) {
		c, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil && c.Status.Phase == corev1.ClaimBound, nil
	})
	waitFor(t, ctx, "a ProvisioningFailed event naming the missing class", func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=missing"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "ProvisioningFailed" && strings.Contains(e.Message, `"fast-ssd" not found`) {
				return true, nil
			}
		}
		return false, nil
	})
	c, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "missing", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.Phase != corev1.ClaimPending {
		t.Errorf("claim on a missing StorageClass: got phase %s, want Pending", c.Status.Phase)
	}
}

func testGarbageCollection(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, _ *rest.Config) {
	owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	dep := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{ref}}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the dependent collected", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Secrets(ns).Get(ctx, dep.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func newClient(cfg *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(cfg) }

// testBootstrapPolicy: the objects every Kubernetes cluster starts with are
// there once the cluster is ready — kube-controlplane makes them with hooks
// of its own in place of upstream's (see its bootstrap.go) — and the
// aggregated roles have their rules.
func testBootstrapPolicy(t *testing.T, ctx context.Context, cs kubernetes.Interface, _ string, _ *rest.Config) {
	rbac := cs.RbacV1()
	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:kube-scheduler", "system:kube-controller-manager", "system:controller:deployment-controller", "system:node", "system:public-info-viewer"} {
		if _, err := rbac.ClusterRoles().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterRole %s: %v", name, err)
		}
	}
	for _, name := range []string{"cluster-admin", "system:kube-scheduler", "system:controller:statefulset-controller", "system:public-info-viewer"} {
		if _, err := rbac.ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterRoleBinding %s: %v", name, err)
		}
	}
	if _, err := rbac.Roles("kube-system").Get(ctx, "extension-apiserver-authentication-reader", metav1.GetOptions{}); err != nil {
		t.Errorf("Role kube-system/extension-apiserver-authentication-reader: %v", err)
	}
	if _, err := rbac.RoleBindings("kube-public").Get(ctx, "system:controller:bootstrap-signer", metav1.GetOptions{}); err != nil {
		t.Errorf("RoleBinding kube-public/system:controller:bootstrap-signer: %v", err)
	}
	waitFor(t, ctx, "the aggregated role edit to have rules", func(ctx context.Context) (bool, error) {
		r, err := rbac.ClusterRoles().Get(ctx, "edit", metav1.GetOptions{})
		return err == nil && len(r.Rules) > 0, err
	})
	for _, name := range []string{"system-node-critical", "system-cluster-critical"} {
		if _, err := cs.SchedulingV1().PriorityClasses().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("PriorityClass %s: %v", name, err)
		}
	}
}

// testLoopbackCertificate checks that kube-controlplane was built with its
// loopback certificate patch (hack/build-controlplane.sh): the certificate
// the API server presents for its own connections is ECDSA, and the server
// still serves them (the bootstrap hooks, which use them, passed for the
// cluster to be ready).
func testLoopbackCertificate(t *testing.T, ctx context.Context, _ kubernetes.Interface, _ string, cfg *rest.Config) {
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	d := tls.Dialer{Config: &tls.Config{
		ServerName:         "apiserver-loopback-client", // server.LoopbackClientServerNameOverride
		InsecureSkipVerify: true,                        // only the certificate's key is looked at
	}}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		t.Fatal("no certificate presented")
	}
	if got := certs[0].PublicKeyAlgorithm; got != x509.ECDSA {
		t.Errorf("loopback certificate key: %v, want ECDSA", got)
	}
	if got := certs[0].DNSNames; len(got) != 1 || got[0] != "apiserver-loopback-client" {
		t.Errorf("loopback certificate names %q, want apiserver-loopback-client", got)
	}
}

// testOpenAPIDocuments checks the OpenAPI documents kube-controlplane builds
// when they are first read (hack/build-controlplane.sh): the v3 index names
// the built-in group versions and the CRDs' by hashes that each document is
// then served under, a stale hash is redirected to the current one, a new
// CRD's group version is in the index as soon as apiextensions documents it
// (the aggregator reads its local servers' indexes when its own is read,
// not once a second), and the v2 document holds the built-in types.
func testOpenAPIDocuments(t *testing.T, ctx context.Context, _ kubernetes.Interface, _ string, cfg *rest.Config) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		return send(t, ctx, hc, cfg.Host, http.MethodGet, path, "")
	}

	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	// The CRDs' group versions are added by apiextensions' controller
	// once the CRDs are established.
	waitFor(t, ctx, "the OpenAPI v3 index to name apps/v1 and KWOK's CRDs", func(context.Context) (bool, error) {
		if _, body := get("/openapi/v3"); json.Unmarshal(body, &index) != nil {
			return false, nil
		}
		_, apps := index.Paths["apis/apps/v1"]
		_, kwok := index.Paths["apis/kwok.x-k8s.io/v1alpha1"]
		return apps && kwok, nil
	})
	for _, gv := range []struct{ path, schema string }{
		{"api/v1", "io.k8s.api.core.v1.Pod"},
		{"apis/apps/v1", "io.k8s.api.apps.v1.Deployment"},
		{"apis/apiextensions.k8s.io/v1", "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"},
		{"apis/kwok.x-k8s.io/v1alpha1", "io.x-k8s.kwok.v1alpha1.Logs"},
	} {
		ref := index.Paths[gv.path].ServerRelativeURL
		u, err := url.Parse(ref)
		if err != nil || u.Query().Get("hash") == "" {
			t.Fatalf("index names %s as %q, want a URL with a hash", gv.path, ref)
		}
		resp, body := get(ref)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", ref, resp.Status)
		}
		if etag := strings.Trim(resp.Header.Get("Etag"), `"`); etag != u.Query().Get("hash") {
			t.Errorf("GET %s: ETag %q, want the index's hash", ref, etag)
		}
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("GET %s: %v", ref, err)
		}
		if _, ok := doc.Components.Schemas[gv.schema]; !ok {
			t.Errorf("GET %s: no schema %s among %d", ref, gv.schema, len(doc.Components.Schemas))
		}
	}
	stale := "/openapi/v3/apis/apps/v1?hash=0123"
	if resp, _ := get(stale); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != index.Paths["apis/apps/v1"].ServerRelativeURL {
		t.Errorf("GET %s: %s to %q, want 301 to %q", stale, resp.Status, resp.Header.Get("Location"), index.Paths["apis/apps/v1"].ServerRelativeURL)
	}

	// A CRD made now: its group version is in the index, and its document
	// holds its kind, well before the aggregator's own pass over its local
	// servers (every ten minutes) would put it there.
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"gadgets.fresh.oplab.test"},
		"spec":{"group":"fresh.oplab.test","scope":"Namespaced",
			"names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
			"versions":[{"name":"v1","served":true,"storage":true,
				"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}}}]}}`
	if resp, body := send(t, ctx, hc, cfg.Host, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create the CRD: %s: %s", resp.Status, body)
	}
	made := time.Now()
	waitFor(t, ctx, "the new CRD's group version in the OpenAPI v3 index", func(context.Context) (bool, error) {
		if _, body := get("/openapi/v3"); json.Unmarshal(body, &index) != nil {
			return false, nil
		}
		ref, ok := index.Paths["apis/fresh.oplab.test/v1"]
		if !ok {
			return false, nil
		}
		resp, body := get(ref.ServerRelativeURL)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"test.oplab.fresh.v1.Gadget"`), nil
	})
	t.Logf("the new CRD's group version documented %s after its create", time.Since(made).Round(time.Millisecond))

	resp, body := get("/openapi/v2")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v2: %s", resp.Status)
	}
	var v2 struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(body, &v2); err != nil {
		t.Fatalf("GET /openapi/v2: %v", err)
	}
	for _, name := range []string{"io.k8s.api.apps.v1.Deployment", "io.k8s.api.core.v1.Pod"} {
		if _, ok := v2.Definitions[name]; !ok {
			t.Errorf("/openapi/v2 has no definition %s among %d", name, len(v2.Definitions))
		}
	}
}

// testMutatingPolicyOnCRD checks that a MutatingAdmissionPolicy patches a
// custom resource with an apply configuration, which needs the resource's
// schema from the /openapi/v3 index: kube-controlplane's plugin reads the
// index when a policy needs it, not every 5 s (hack/build-controlplane.sh),
// so a CRD made a moment before is already there.
func testMutatingPolicyOnCRD(t *testing.T, ctx context.Context, _ kubernetes.Interface, ns string, cfg *rest.Config) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	create := func(path, body string) {
		t.Helper()
		if resp, out := send(t, ctx, hc, cfg.Host, http.MethodPost, path, body); resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %s %s", path, resp.Status, out)
		}
	}
	create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"widgets.mutate.oplab.test"},
		"spec":{"group":"mutate.oplab.test","scope":"Namespaced",
			"names":{"plural":"widgets","singular":"widget","kind":"Widget"},
			"versions":[{"name":"v1","served":true,"storage":true,
				"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"},"color":{"type":"string"}}}}}}}]}}`)
	create("/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicy",
		"metadata":{"name":"widget-size"},
		"spec":{"failurePolicy":"Fail","reinvocationPolicy":"Never",
			"matchConstraints":{"resourceRules":[{"apiGroups":["mutate.oplab.test"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["widgets"]}]},
			"mutations":[{"patchType":"ApplyConfiguration","applyConfiguration":{"expression":"Object{spec: Object.spec{size: 7}}"}}]}}`)
	create("/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings", `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingAdmissionPolicyBinding",
		"metadata":{"name":"widget-size"},"spec":{"policyName":"widget-size"}}`)
	// The CRD is served and the policy in force a moment later: make
	// widgets until one is made through the policy.
	var last string
	n := 0
	waitFor(t, ctx, "a widget patched by the mutating policy", func(context.Context) (bool, error) {
		n++
		resp, out := send(t, ctx, hc, cfg.Host, http.MethodPost, "/apis/mutate.oplab.test/v1/namespaces/"+ns+"/widgets",
			fmt.Sprintf(`{"apiVersion":"mutate.oplab.test/v1","kind":"Widget","metadata":{"name":"w%d"},"spec":{"color":"red"}}`, n))
		last = fmt.Sprintf("%s %s", resp.Status, out)
		if resp.StatusCode != http.StatusCreated {
			return false, nil
		}
		var w struct {
			Spec struct {
				Size  int    `json:"size"`
				Color string `json:"color"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(out, &w); err != nil {
			return false, err
		}
		return w.Spec.Size == 7 && w.Spec.Color == "red", nil
	})
	t.Logf("widget %d patched; the last answer: %.200s", n, last)
}

// send sends body, JSON when there is one, to path of the API server at
// host with hc, and returns the answer and its body.
func send(t *testing.T, ctx context.Context, hc *http.Client, host, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, host+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// testAdmissionPolicyVariables checks that an admission policy's
// expressions read object, oldObject, namespaceObject and params
// (kube-controlplane converts each when an expression first reads it:
// hack/build-controlplane.sh), behind a match condition that reads the
// request alone, as the fence's policies begin.
func testAdmissionPolicyVariables(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, _ *rest.Config) {
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"semantics":"vars"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Data:       map[string]string{"max": "3"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := "semantics-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"checked": "yes"}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "anyone", Expression: "request.userInfo.username != 'nobody'"}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "size(object.data) <= int(params.data.max)", Message: "too many keys"},
				{Expression: "oldObject == null || object.data.keep == oldObject.data.keep", Message: "keep changed"},
				{Expression: "'semantics' in namespaceObject.metadata.labels && namespaceObject.metadata.labels['semantics'] == 'vars'", Message: "namespace not labelled"},
			},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ParamRef:          &admissionregistrationv1.ParamRef{Name: "limits", Namespace: ns, ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	cms := cs.CoreV1().ConfigMaps(ns)
	checked := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "checked", Labels: map[string]string{"checked": "yes"}}, Data: data}
	}
	refused := func(err error, message string) bool {
		return err != nil && apierrors.IsInvalid(err) && strings.Contains(err.Error(), message)
	}
	// The API server enforces a new policy after its next refresh.
	waitFor(t, ctx, "the policy to refuse four keys (object, params)", func(ctx context.Context) (bool, error) {
		_, err := cms.Create(ctx, checked(map[string]string{"keep": "a", "b": "", "c": "", "d": ""}), metav1.CreateOptions{})
		if err == nil {
			return false, cms.Delete(ctx, "checked", metav1.DeleteOptions{})
		}
		return refused(err, "too many keys"), nil
	})
	cm, err := cms.Create(ctx, checked(map[string]string{"keep": "a", "b": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create within the policy: %v", err)
	}
	cm.Data["b"] = "2"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update within the policy: %v", err)
	}
	cm.Data["keep"] = "b"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); !refused(err, "keep changed") {
		t.Errorf("update of keep (oldObject): %v, want refused with %q", err, "keep changed")
	}
	if _, err := cs.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"semantics":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the policy to refuse a write in an unlabelled namespace (namespaceObject)", func(ctx context.Context) (bool, error) {
		cm, err := cms.Get(ctx, "checked", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cm.Data["b"] = "3"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return refused(err, "namespace not labelled"), nil
	})
}

// testConflictWindow: kube-controlplane's ConflictWindow admission plugin
// answers the marked user's writes of a marked object with 409 Conflict
// until the mark's time, counts them on /metrics, lets everyone else
// write, and lets nobody but the admin set the marks (the grader's check
// conflictsRetried stands on all four).
func testConflictWindow(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, admin *rest.Config) {
	const (
		writer, other = "conflict-writer", "other-writer"
		userKey       = "conflicts.oplab.dev/user"
		untilKey      = "conflicts.oplab.dev/until"
	)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "writers"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update", "patch"}}},
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "writers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: writer}, {Kind: "User", Name: other}},
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := func(user string) kubernetes.Interface {
		cfg := rest.CopyConfig(admin)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	w, o := as(writer), as(other)
	mark := func(name string, until time.Time) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			userKey: writer, untilKey: until.UTC().Format(time.RFC3339Nano),
		}}, Data: map[string]string{"n": "0"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(c kubernetes.Interface, name, patch string) error {
		_, err := c.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
	mark("open", time.Now().Add(time.Hour))
	mark("closed", time.Now().Add(-time.Minute))
	waitFor(t, ctx, "the writers' role to be seen", func(ctx context.Context) (bool, error) {
		err := set(o, "open", `{"data":{"n":"1"}}`)
		if apierrors.IsForbidden(err) {
			return false, nil // the authorizer's cache has not seen the binding yet
		}
		return err == nil, err
	})
	before := conflictsRefused(t, ctx, cs)
	err := set(w, "open", `{"data":{"n":"2"}}`)
	if !apierrors.IsConflict(err) {
		t.Fatalf("the marked user's write in the window: got %v, want 409 Conflict", err)
	}
	if after := conflictsRefused(t, ctx, cs); after != before+1 {
		t.Errorf("oplab_conflict_window_refused_total went from %v to %v, want one more", before, after)
	}
	if err := set(w, "closed", `{"data":{"n":"2"}}`); err != nil {
		t.Errorf("the marked user's write after the window: %v", err)
	}
	if err := set(cs, "open", `{"data":{"n":"3"}}`); err != nil {
		t.Errorf("the admin's write in the window: %v", err)
	}
	// The marks are the admin's alone: setting one, moving its time or
	// making an object with it is refused; removing a spent one is not.
	if err := set(o, "open", `{"metadata":{"annotations":{"conflicts.oplab.dev/user":"`+other+`"}}}`); !apierrors.IsForbidden(err) {
		t.Errorf("another user changing the mark's user: got %v, want 403 Forbidden", err)
	}
	if err := set(w, "closed", `{"metadata":{"annotations":{"conflicts.oplab.dev/until":"2999-01-01T00:00:00Z"}}}`); !apierrors.IsForbidden(err) {
		t.Errorf("the marked user moving the mark's time: got %v, want 403 Forbidden", err)
	}
	_, err = o.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "forged", Annotations: map[string]string{
		userKey: writer, untilKey: time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano),
	}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("another user making a marked object: got %v, want 403 Forbidden", err)
	}
	if err := set(w, "closed", `{"metadata":{"annotations":{"conflicts.oplab.dev/user":null,"conflicts.oplab.dev/until":null}}}`); err != nil {
		t.Errorf("the marked user removing a spent mark: %v", err)
	}
}

// conflictsRefused reads the ConflictWindow plugin's counter from the API
// server's /metrics.
func conflictsRefused(t *testing.T, ctx context.Context, cs kubernetes.Interface) float64 {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "oplab_conflict_window_refused_total "); ok {
			var n float64
			if _, err := fmt.Sscan(v, &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no oplab_conflict_window_refused_total on the API server's /metrics")
	return 0
}
