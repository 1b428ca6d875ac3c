package fence

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/charts"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

func newClients(t *testing.T, cfg *rest.Config) clients {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return clients{cs: cs, dyn: dyn}
}

// impersonating returns cfg acting as user.
func impersonating(cfg *rest.Config, user string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	return c
}

// tokenFor returns cfg's server reached with a token of ServiceAccount
// ns/name, minted with cfg's rights: a real credential, as a pod or a
// controller has.
func tokenFor(t *testing.T, ctx context.Context, cfg *rest.Config, ns, name string) *rest.Config {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	ca, err := caData(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: cfg.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

// attempt is a request and who must answer it: "" (allowed), "rbac"
// (refused by RBAC), or the name of the policy that must refuse it.
type attempt struct {
	name string
	do   func(ctx context.Context, c clients) error
	want string
}

func (a attempt) check(t *testing.T, err error) {
	t.Helper()
	switch {
	case a.want == "" && err != nil:
		t.Errorf("%s: got %v, want allowed", a.name, err)
	case a.want == "":
	case err == nil:
		t.Errorf("%s: got allowed, want refused by %s", a.name, a.want)
	case !apierrors.IsForbidden(err):
		t.Errorf("%s: got %v, want Forbidden by %s", a.name, err, a.want)
	case a.want == "rbac" && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
		t.Errorf("%s: got %v, want refused by RBAC", a.name, err)
	case a.want != "rbac" && !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+a.want+"'"):
		t.Errorf("%s: got %v, want refused by %s", a.name, err, a.want)
	case a.want != "rbac" && !strings.Contains(err.Error(), "denied request: oplab: "):
		t.Errorf("%s: got %v, want a message of oplab's", a.name, err)
	}
}

var (
	dryUpdate = metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}
	dryDelete = metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func pod(name string, edit func(*corev1.PodSpec)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if edit != nil {
		edit(&p.Spec)
	}
	return p
}

func template(edit func(*corev1.PodSpec)) corev1.PodTemplateSpec {
	p := pod("", edit)
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: p.Spec}
}

func createPod(p *corev1.Pod) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := c.cs.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, p, dryCreate)
		return err
	}
}

func patch(res func(c clients) interface {
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
}, name, body string, sub ...string) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := res(c).Patch(ctx, name, types.MergePatchType, []byte(body), dryPatch, sub...)
		return err
	}
}

func resourceIn(gvr schema.GroupVersionResource, ns string) func(c clients) interface {
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
} {
	return func(c clients) interface {
		Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
	} {
		if ns == "" {
			return c.dyn.Resource(gvr)
		}
		return c.dyn.Resource(gvr).Namespace(ns)
	}
}

var (
	podsGVR         = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesGVR   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deploymentsGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	statefulSetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	rolesGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	vapGVR          = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	clusterLogsGVR  = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}
)

// fixtures makes, as admin, what the attempts act on: an operator-like
// Deployment and the operator's RBAC in oplab-system, a pod whose
// simulated server is a replica, a StatefulSet.
func fixtures(t *testing.T, ctx context.Context, admin clients) {
	t.Helper()
	cs := admin.cs
	must := func(what string, err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("fixture %s: %v", what, err)
		}
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "oplab-system"}}, metav1.CreateOptions{})
	must("namespace", err)
	_, err = cs.CoreV1().ServiceAccounts("oplab-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "pg-operator"}}, metav1.CreateOptions{})
	must("service account", err)
	sel := map[string]string{"app": "pg-operator"}
	_, err = cs.AppsV1().Deployments("oplab-system").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-operator"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: pod("", nil).Spec}},
	}, metav1.CreateOptions{})
	must("deployment", err)
	data, err := fs.ReadFile(charts.PGOperator(), "files/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &role); err != nil {
		t.Fatal(err)
	}
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
	must("operator's role", err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pg-operator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "pg-operator", Namespace: "oplab-system"}},
	}, metav1.CreateOptions{})
	must("operator's binding", err)
	web := pod("web", nil)
	web.Annotations = map[string]string{"sim.databases.example.com/role": "replica"}
	_, err = cs.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, web, metav1.CreateOptions{})
	must("pod", err)
	_, err = cs.AppsV1().StatefulSets(metav1.NamespaceDefault).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: template(nil)},
	}, metav1.CreateOptions{})
	must("statefulset", err)
}

// The learner, through the kubeconfig the console gets, may do what a
// cluster admin does inside their cluster, and is refused, each time by
// the policy meant to, what reaches the node, forges evidence or changes
// the cluster's machinery. Trusted identities are not fenced.
func TestLearnerIsFenced(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	if err := Install(ctx, c.Config); err != nil {
		t.Fatal(err)
	}
	t.Logf("fence installed and enforced in %s", time.Since(start).Round(time.Millisecond))
	admin := newClients(t, c.Config)
	fixtures(t, ctx, admin)

	path := KubeconfigPath(c.Kubeconfig)
	data, err := Kubeconfig(ctx, c.Config, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	learner := newClients(t, cfg)
	who, err := learner.cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != User {
		t.Fatalf("the learner's kubeconfig: got user %+v %v, want %s", who.Status.UserInfo, err, User)
	}

	node := "oplab-worker"
	if nodes, err := admin.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil && len(nodes.Items) > 0 {
		node = nodes.Items[0].Name
	}
	for _, a := range learnerAttempts(node) {
		a.check(t, a.do(ctx, learner))
	}

	// The operator's account, impersonated: RBAC lets it write Events,
	// the fence does not, as the request carries no credential of its own.
	asOperator := newClients(t, impersonating(cfg, "system:serviceaccount:oplab-system:pg-operator"))
	attempt{"an Event, as the impersonated operator", createEvent, "oplab-events"}.check(t, createEvent(ctx, asOperator))
	// A ServiceAccount the learner makes and gives the right to write
	// Events, with a token of its own: untrusted.
	mine := learnerAccount(t, ctx, learner, cfg)
	attempt{"an Event, as the learner's own account", createEvent, "oplab-events"}.check(t, createEvent(ctx, mine))

	// kind's admin (kubeadm's admin.conf): a user in kubeadm:cluster-admins,
	// bound to cluster-admin as kubeadm binds it. Its certificate is
	// played here by the admin's impersonation.
	if _, err := admin.cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:cluster-admins"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "kubeadm:cluster-admins"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kindAdmin := rest.CopyConfig(c.Config)
	kindAdmin.Impersonate = rest.ImpersonationConfig{UserName: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins"}}
	kind := newClients(t, kindAdmin)
	// The RBAC authorizer sees a new binding a moment after it is made:
	// wait until it is in force before acting as kind's admin.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := kind.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "default"}},
		}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed, nil
	}); err != nil {
		t.Fatalf("kind's admin binding not in force after 30 s: %v", err)
	}
	attempt{"a privileged pod, as kind's admin", nil, ""}.check(t, createPod(pod("kind-admin", privileged))(ctx, kind))
	attempt{"a ConfigMap in oplab-system, as kind's admin", nil, ""}.check(t, configMapIn("oplab-system")(ctx, kind))

	// Trusted: the admin, and a controller's own ServiceAccount token.
	attempt{"a privileged pod, as admin", createPod(pod("admin", privileged)), ""}.check(t, createPod(pod("admin", privileged))(ctx, admin))
	controller := newClients(t, tokenFor(t, ctx, c.Config, metav1.NamespaceSystem, "deployment-controller"))
	attempt{"an Event, as the deployment controller", createEvent, ""}.check(t, createEvent(ctx, controller))
}

func privileged(s *corev1.PodSpec) {
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

func createEvent(ctx context.Context, c clients) error {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "forged-"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "databases.example.com/v1", Kind: "PostgresCluster", Name: "prod-db", Namespace: metav1.NamespaceDefault},
		Reason:         "SwitchoverComplete", Message: "switched over to prod-db-2", Type: corev1.EventTypeNormal,
	}
	_, err := c.cs.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, dryCreate)
	return err
}

// learnerAccount is a ServiceAccount the learner makes in default, with a
// Role (of rights the learner holds) to write Events, reached with a token
// the learner mints.
func learnerAccount(t *testing.T, ctx context.Context, learner clients, cfg *rest.Config) clients {
	t.Helper()
	cs := learner.cs
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("as the learner, create a ServiceAccount: %v", err)
	}
	if _, err := cs.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "events"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("as the learner, create a Role: %v", err)
	}
	if _, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "events"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "events"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "mine", Namespace: "default"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("as the learner, bind the Role: %v", err)
	}
	return newClients(t, tokenFor(t, ctx, cfg, "default", "mine"))
}

// learnerAttempts are the requests of TestLearnerIsFenced; node names the
// cluster's node.
func learnerAttempts(node string) []attempt {
	hostPath := func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	}
	hostNetwork := func(s *corev1.PodSpec) { s.HostNetwork = true }
	// `kubectl debug node/...`: the node's namespaces and its root.
	debugNode := func(s *corev1.PodSpec) {
		s.NodeName, s.HostNetwork, s.HostPID, s.HostIPC = node, true, true, true
		hostPath(s)
	}
	return []attempt{
		// What a cluster admin does in their own cluster.
		{"a plain pod", createPod(pod("plain", nil)), ""},
		{"a pod with an emptyDir, a ConfigMap and baseline capabilities", createPod(pod("ok", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}}
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "CHOWN"}}}
		})), ""},
		{"relabel a pod", patch(resourceIn(podsGVR, "default"), "web", `{"metadata":{"labels":{"databases.example.com/role":"primary"}}}`), ""},
		{"annotate a pod that has a simulated server", patch(resourceIn(podsGVR, "default"), "web", `{"metadata":{"annotations":{"note":"mine"}}}`), ""},
		{"scale a StatefulSet", func(ctx context.Context, c clients) error {
			_, err := c.cs.AppsV1().StatefulSets("default").Patch(ctx, "db", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), dryPatch)
			return err
		}, ""},
		{"a Deployment", deployment(template(nil)), ""},
		{"a namespace and a ConfigMap in it", func(ctx context.Context, c clients) error {
			if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := c.cs.CoreV1().ConfigMaps("mine").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"label a namespace", patch(resourceIn(namespacesGVR, ""), "default", `{"metadata":{"labels":{"team":"mine"}}}`), ""},
		{"a ClusterRole of rights held", func(ctx context.Context, c clients) error {
			_, err := c.cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, dryCreate)
			return err
		}, ""},
		{"a RoleBinding to view", roleBinding("view"), ""},
		{"scale the operator's Deployment", func(ctx context.Context, c clients) error {
			_, err := c.cs.AppsV1().Deployments("oplab-system").UpdateScale(ctx, "pg-operator", &autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: "pg-operator", Namespace: "oplab-system"}, Spec: autoscalingv1.ScaleSpec{Replicas: 0}}, dryUpdate)
			return err
		}, ""},
		{"can-i as the operator", func(ctx context.Context, c clients) error {
			_, err := c.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: "default", Verb: "update", Group: "apps", Resource: "statefulsets"}}}, metav1.CreateOptions{})
			return err
		}, ""},
		{"a CertificateSigningRequest", func(ctx context.Context, c clients) error {
			_, err := c.cs.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: "mine"},
				Spec: certificatesv1.CertificateSigningRequestSpec{Request: nodeCSR(node), SignerName: certificatesv1.KubeAPIServerClientSignerName,
					Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
			}, metav1.CreateOptions{})
			return err
		}, ""},
		{"a StorageClass", storageClass(nil), ""},
		{"a CSI PersistentVolume", createPV(corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "x", VolumeHandle: "x"}}), ""},
		{"an EndpointSlice of one's own", endpointSlice(nil), ""},
		{"a CRD of one's own", crd("widgets.example.org", "example.org", nil), ""},
		{"a token for one's own ServiceAccount", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}, ""},

		// What reaches the node.
		{"a privileged pod", createPod(pod("p", privileged)), "oplab-pods"},
		{"a hostPath pod", createPod(pod("p", hostPath)), "oplab-pods"},
		{"a hostNetwork pod", createPod(pod("p", hostNetwork)), "oplab-pods"},
		{"a hostPID pod", createPod(pod("p", func(s *corev1.PodSpec) { s.HostPID = true })), "oplab-pods"},
		{"a hostIPC pod", createPod(pod("p", func(s *corev1.PodSpec) { s.HostIPC = true })), "oplab-pods"},
		{"kubectl debug node", createPod(pod("node-debugger", debugNode)), "oplab-pods"},
		{"SYS_ADMIN", createPod(pod("p", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}}}
		})), "oplab-pods"},
		{"a hostPort", createPod(pod("p", func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		})), "oplab-pods"},
		{"an NFS volume", createPod(pod("p", func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.1", Path: "/"}}}}
		})), "oplab-pods"},
		{"an unconfined seccomp profile", createPod(pod("p", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		})), "oplab-pods"},
		{"an unsafe sysctl", createPod(pod("p", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.core_pattern", Value: "|/x"}}}
		})), "oplab-pods"},
		{"a privileged ephemeral container (kubectl debug --profile=sysadmin)", func(ctx context.Context, c clients) error {
			p, err := c.cs.CoreV1().Pods("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debugger", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}})
			_, err = c.cs.CoreV1().Pods("default").UpdateEphemeralContainers(ctx, "web", p, dryUpdate)
			return err
		}, "oplab-pods"},
		{"a Deployment with a hostPath", deployment(template(hostPath)), "oplab-pods"},
		{"a DaemonSet on the host network", func(ctx context.Context, c clients) error {
			_, err := c.cs.AppsV1().DaemonSets("default").Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d"},
				Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, Template: template(hostNetwork)}}, dryCreate)
			return err
		}, "oplab-pods"},
		{"a privileged CronJob", func(ctx context.Context, c clients) error {
			tpl := template(privileged)
			tpl.Spec.RestartPolicy = corev1.RestartPolicyNever
			_, err := c.cs.BatchV1().CronJobs("default").Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj"},
				Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tpl}}}}, dryCreate)
			return err
		}, "oplab-pods"},
		{"a PodTemplate with a hostPath", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().PodTemplates("default").Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Template: template(hostPath)}, dryCreate)
			return err
		}, "oplab-pods"},
		{"a hostPath PersistentVolume", createPV(corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/anything"}}), "oplab-storage"},
		{"a local PersistentVolume", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
				Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: "local",
					PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/"}},
					NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}}}, dryCreate)
			return err
		}, "oplab-storage"},
		{"a StorageClass choosing a node path", storageClass(map[string]string{"nodePath": "/"}), "oplab-storage"},
		{"a volume posing as provisioned", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: "mine", Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "kubernetes.io/host-path"}},
				Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "x", VolumeHandle: "x"}}}}, dryCreate)
			return err
		}, "oplab-storage"},
		{"the kubelet's API through the API server", func(ctx context.Context, c clients) error {
			return c.cs.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("pods").Do(ctx).Error()
		}, "rbac"},
		{"KWOK's ClusterLogs", func(ctx context.Context, c clients) error {
			cl := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs",
				"metadata": map[string]any{"name": "steal"}, "spec": map[string]any{"logs": []any{map[string]any{"containers": []any{"c"}, "logsFile": "/etc/passwd"}}}}}
			_, err := c.dyn.Resource(clusterLogsGVR).Create(ctx, cl, dryCreate)
			return err
		}, "rbac"},
		{"a CRD with a conversion webhook", crd("gadgets.example.org", "example.org", map[string]any{
			"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []any{"v1"}, "clientConfig": map[string]any{"url": "https://127.0.0.1:1/"}}}), "oplab-crds"},

		// What forges the grader's evidence.
		{"an Event", createEvent, "oplab-events"},
		{"an events.k8s.io Event", func(ctx context.Context, c clients) error {
			_, err := c.cs.EventsV1().Events("default").Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "forged-"},
				EventTime: metav1.NowMicro(), ReportingController: "pg-operator", ReportingInstance: "pg-operator", Action: "Switchover",
				Reason: "SwitchingOver", Type: corev1.EventTypeNormal, Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web", Namespace: "default"}}, dryCreate)
			return err
		}, "oplab-events"},
		{"mark a replica's simulated server primary", patch(resourceIn(podsGVR, "default"), "web", `{"metadata":{"annotations":{"sim.databases.example.com/role":"primary"}}}`), "oplab-simulated-servers"},
		{"remove a simulated server's state", patch(resourceIn(podsGVR, "default"), "web", `{"metadata":{"annotations":{"sim.databases.example.com/role":null}}}`), "oplab-simulated-servers"},
		{"a pod born a simulated primary", createPod(func() *corev1.Pod {
			p := pod("p", nil)
			p.Annotations = map[string]string{"sim.databases.example.com/role": "primary"}
			return p
		}()), "oplab-simulated-servers"},
		{"a StatefulSet template with a simulated server's state", func(ctx context.Context, c clients) error {
			_, err := c.cs.AppsV1().StatefulSets("default").Patch(ctx, "db", types.MergePatchType,
				[]byte(`{"spec":{"template":{"metadata":{"annotations":{"sim.databases.example.com/role":"primary"}}}}}`), dryPatch)
			return err
		}, "oplab-simulated-servers"},
		{"a pod's status", patch(resourceIn(podsGVR, "default"), "web", `{"status":{"phase":"Running"}}`, "status"), "oplab-status"},
		{"a StatefulSet's status", patch(resourceIn(statefulSetsGVR, "default"), "db", `{"status":{"readyReplicas":1}}`, "status"), "oplab-status"},
		{"an EndpointSlice posing as the controller's", endpointSlice(map[string]string{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}), "oplab-endpointslices"},
		{"a ConfigMap posing as a PostgresCluster's", func(ctx context.Context, c clients) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "prod-db-config", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "databases.example.com/v1", Kind: "PostgresCluster", Name: "prod-db", UID: "1", Controller: ptr.To(true)}}}}
			_, err := c.cs.CoreV1().ConfigMaps("default").Create(ctx, cm, dryCreate)
			return err
		}, "oplab-owners"},
		{"redefine PostgresClusters", crd("postgresclusters.databases.example.com", "databases.example.com", nil), "oplab-crds"},

		// What changes the cluster's own machinery.
		{"a ConfigMap in kube-system", configMapIn("kube-system"), "oplab-namespaces"},
		{"a ConfigMap in oplab-system", configMapIn("oplab-system"), "oplab-namespaces"},
		{"a token for a kube-system account", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "deployment-controller", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}, "oplab-namespaces"},
		{"a token for the operator's account", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().ServiceAccounts("oplab-system").CreateToken(ctx, "pg-operator", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}, "oplab-namespaces"},
		{"the operator's image", patch(resourceIn(deploymentsGVR, "oplab-system"), "pg-operator", `{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"mine"}]}}}}`), "oplab-namespaces"},
		// On embedded there is no local-path-storage: were a learner to make
		// it, its ServiceAccounts' tokens would be trusted.
		{"make namespace local-path-storage", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "local-path-storage"}}, dryCreate)
			return err
		}, "oplab-namespaces"},
		{"delete namespace oplab-system", func(ctx context.Context, c clients) error {
			return c.cs.CoreV1().Namespaces().Delete(ctx, "oplab-system", dryDelete)
		}, "oplab-namespaces"},
		{"a Pod Security label", patch(resourceIn(namespacesGVR, ""), "default", `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`), "oplab-namespaces"},
		{"delete the learner's binding", func(ctx context.Context, c clients) error {
			return c.cs.RbacV1().ClusterRoleBindings().Delete(ctx, "oplab:learner", dryDelete)
		}, "oplab-fence"},
		{"relabel the learner's role", patch(resourceIn(rolesGVR, ""), "oplab:learner", `{"metadata":{"labels":{"oplab.dev/fence":null}}}`), "oplab-fence"},

		// What RBAC escalation prevention refuses.
		{"bind cluster-admin", func(ctx context.Context, c clients) error {
			_, err := c.cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "default"}}}, dryCreate)
			return err
		}, "rbac"},
		{"a wildcard role", func(ctx context.Context, c clients) error {
			_, err := c.cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "star"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, dryCreate)
			return err
		}, "rbac"},
		{"make the operator's role a wildcard", patch(resourceIn(rolesGVR, ""), "pg-operator", `{"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`), "rbac"},
		{"a RoleBinding to edit (it proxies to pods)", roleBinding("edit"), "rbac"},
		{"edit a ValidatingAdmissionPolicy", patch(resourceIn(vapGVR, ""), "oplab-pods", `{"spec":{"failurePolicy":"Ignore"}}`), "rbac"},
		{"delete a ValidatingAdmissionPolicy", func(ctx context.Context, c clients) error {
			return c.dyn.Resource(vapGVR).Delete(ctx, "oplab-events", dryDelete)
		}, "rbac"},
		{"approve a CSR", func(ctx context.Context, c clients) error {
			csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}
			csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Mine"}}
			_, err := c.cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, "mine", csr, dryUpdate)
			return err
		}, "rbac"},
		{"impersonate a controller", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().ServiceAccounts("kube-system").Get(ctx, "deployment-controller", metav1.GetOptions{})
			if err != nil {
				return err
			}
			return impersonationOf(ctx, c, "system:serviceaccount:kube-system:deployment-controller")
		}, "rbac"},
		{"impersonate system:masters", func(ctx context.Context, c clients) error {
			return impersonationOf(ctx, c, "admin", "system:masters")
		}, "rbac"},
	}
}

// nodeCSR is a certificate request for CN=system:node:<node>, O=system:nodes:
// what a learner would ask for to pass as a node.
func nodeCSR(node string) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func deployment(tpl corev1.PodTemplateSpec) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := c.cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, Template: tpl}}, dryCreate)
		return err
	}
}

func roleBinding(role string) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := c.cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "default"}}}, dryCreate)
		return err
	}
}

func storageClass(params map[string]string) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := c.cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
			Provisioner: "rancher.io/local-path", Parameters: params}, dryCreate)
		return err
	}
}

func createPV(src corev1.PersistentVolumeSource) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
			Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, PersistentVolumeSource: src}}, dryCreate)
		return err
	}
}

func endpointSlice(labels map[string]string) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[discoveryv1.LabelServiceName] = "prod-db-rw"
		_, err := c.cs.DiscoveryV1().EndpointSlices("default").Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "prod-db-rw-mine", Labels: labels}, AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.2"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "prod-db-2", Namespace: "default"}}},
		}, dryCreate)
		return err
	}
}

func crd(name, group string, conversion map[string]any) func(ctx context.Context, c clients) error {
	plural, _, _ := strings.Cut(name, ".")
	return func(ctx context.Context, c clients) error {
		spec := map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.TrimSuffix(plural, "s"), "kind": "Thing", "listKind": "ThingList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}},
		}
		if conversion != nil {
			spec["conversion"] = conversion
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": name}, "spec": spec}}
		_, err := c.dyn.Resource(crdGVR).Create(ctx, obj, dryCreate)
		return err
	}
}

func configMapIn(ns string) func(ctx context.Context, c clients) error {
	return func(ctx context.Context, c clients) error {
		_, err := c.cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, dryCreate)
		return err
	}
}

// impersonationOf makes a request as user (in groups): the API server
// answers for the impersonation first.
func impersonationOf(ctx context.Context, c clients, user string, groups ...string) error {
	req := c.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/pods").SetHeader("Impersonate-User", user)
	for _, g := range groups {
		req = req.SetHeader("Impersonate-Group", g)
	}
	return req.Do(ctx).Error()
}

// The kubeconfig is written beside the admin's, private, reused while its
// token is fresh, and replaced when it is not.
func TestKubeconfigIsKeptFresh(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	path := KubeconfigPath(c.Kubeconfig)
	if got, want := filepath.Dir(path), filepath.Dir(c.Kubeconfig); got != want {
		t.Errorf("got the learner's kubeconfig in %s, want beside the admin's in %s", got, want)
	}
	// No Install first: a cluster made before the fence gets one.
	first, err := Kubeconfig(ctx, c.Config, path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("got %v %v, want a file of mode 0600", fi, err)
	}
	again, err := Kubeconfig(ctx, c.Config, path)
	if err != nil || string(again) != string(first) {
		t.Errorf("second call: got a new kubeconfig (%v), want the fresh one kept", err)
	}
	stale := strings.Replace(string(first), tokenOf(t, first), staleToken, 1)
	if err := os.WriteFile(path, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	renewed, err := Kubeconfig(ctx, c.Config, path)
	if err != nil {
		t.Fatal(err)
	}
	if tok := tokenOf(t, renewed); tok == staleToken || tok == tokenOf(t, first) {
		t.Error("a stale token: got it kept, want a new one")
	}
	// Renewals at once (two console commands): each gets a whole
	// kubeconfig, and one whole file is left, no temporary ones.
	if err := os.WriteFile(path, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if data, err := Kubeconfig(ctx, c.Config, path); err != nil || !fresh(data, time.Now()) {
				t.Errorf("a renewal beside others: got %v, want a fresh kubeconfig", err)
			}
		})
	}
	wg.Wait()
	if kept, err := os.ReadFile(path); err != nil || !fresh(kept, time.Now()) {
		t.Errorf("after renewals at once: got %v, want a fresh kubeconfig kept", err)
	}
	if left, _ := filepath.Glob(path + ".*"); len(left) > 0 {
		t.Errorf("after renewals at once: got temporary files %v left", left)
	}

	cfg, err := clientcmd.RESTConfigFromKubeConfig(renewed)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the renewed kubeconfig: got %v, want it to list pods", err)
	}
}

// staleToken is a JWT (unsigned, claims only) issued on 2020-01-01 for
// two hours.
var staleToken = "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString([]byte(`{"iat":1577836800,"exp":1577844000}`)) + ".x"

func tokenOf(t *testing.T, kubeconfig []byte) string {
	t.Helper()
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.AuthInfos[ServiceAccount]
	if a == nil || a.Token == "" {
		t.Fatal("the kubeconfig has no token")
	}
	return a.Token
}

func TestFresh(t *testing.T) {
	t.Parallel()
	now := time.Unix(1577836800, 0) // the stale token's iat
	data, err := kubeconfig(&rest.Config{Host: "https://127.0.0.1:1"}, staleToken)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		at   time.Time
		want bool
	}{
		{"just issued", now, true},
		{"before half its life", now.Add(59 * time.Minute), true},
		{"past half its life", now.Add(61 * time.Minute), false},
		{"expired", now.Add(3 * time.Hour), false},
	}
	for _, tt := range tests {
		if got := fresh(data, tt.at); got != tt.want {
			t.Errorf("%s: got fresh %v, want %v", tt.name, got, tt.want)
		}
	}
	if fresh([]byte("not a kubeconfig"), now) {
		t.Error("garbage: got fresh, want not")
	}
}
