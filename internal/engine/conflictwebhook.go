package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/conflictwindow"
	"oplab.dev/oplab/internal/operator/install"
)

// Where the API server is upstream kube-apiserver (kind), it has no
// ConflictWindow admission plugin: the conflictwindow webhook stands in
// for it, served by a pod of oplab's namespace (which the fence keeps
// from the learner), its program oplab's own, seen read-only from the
// node as a learner's controller sees its own (cluster.Provider's
// ConfinedPod). It refuses the same writes, and the API server counts its
// refusals (apiserver_admission_webhook_rejection_count) where the grader
// reads them: not the webhook's own count, which a forged review sent
// straight to its Service would raise.
const (
	// conflictService names the webhook's Deployment, Service and Secret
	// in install.Namespace, and its program in the bin directory.
	conflictService = "conflictwindow"
	// conflictWebhook names the ValidatingWebhookConfiguration and its
	// webhook.
	conflictWebhook = "conflicts.oplab.dev"
	conflictPort    = 8443
)

// conflictAdmins are the groups of a cluster's admins, whose writes pass
// and who alone may set the marks: system:masters, and kubeadm's
// (kind's admin kubeconfig is in it).
const conflictAdmins = "system:masters,kubeadm:cluster-admins"

// ensureConflictWindow makes the API server refuse writes on purpose where
// it does not already: the webhook installed and serving. A cluster
// whose API server has the plugin (kube-controlplane's) needs nothing.
func (e *Engine) ensureConflictWindow(ctx context.Context) error {
	if r, err := e.apiServerRefusals(ctx); err != nil || r.pluginKnown {
		return err
	}
	if e.t.Provider == nil || e.t.BinDir == "" {
		return fmt.Errorf("the API server has no ConflictWindow plugin, and oplab cannot run its webhook here: %w", ErrUnsupported)
	}
	prog := filepath.Join(e.t.BinDir, conflictService)
	if _, err := os.Stat(prog); err != nil {
		return fmt.Errorf("the ConflictWindow webhook's program: %w (run `make build`)", err)
	}
	ns := install.Namespace
	if _, err := e.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	host := conflictService + "." + ns + ".svc"
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, nil, []string{conflictService + "." + ns})
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: conflictService, Namespace: ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
	if err := createOrReplace(ctx, e.cs.CoreV1().Secrets(ns), secret); err != nil {
		return fmt.Errorf("the webhook's certificate: %w", err)
	}
	spec, err := e.t.Provider.ConfinedPod(ctx, e.t.Cluster, cluster.Sandbox{ReadOnly: []string{prog}}, prog, []string{
		fmt.Sprintf("--addr=:%d", conflictPort), "--tls-cert=/tls/tls.crt", "--tls-key=/tls/tls.key", "--admins=" + conflictAdmins,
	})
	if err != nil {
		return err
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: conflictService}}})
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "tls", MountPath: "/tls", ReadOnly: true})
	spec.Containers[0].Name = conflictService
	spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "https", ContainerPort: conflictPort}}
	labels := map[string]string{"app.kubernetes.io/name": conflictService}
	// The certificate is new: the pod too, so that it serves it.
	spec.TerminationGracePeriodSeconds = ptr.To[int64](2)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: conflictService, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"oplab.dev/certificate": fmt.Sprintf("%x", cert[len(cert)-40:])}},
				Spec:       spec,
			},
		},
	}
	if err := createOrReplace(ctx, e.cs.AppsV1().Deployments(ns), dep); err != nil {
		return fmt.Errorf("the webhook's Deployment: %w", err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: conflictService, Namespace: ns, Labels: labels},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "https", Port: 443, TargetPort: intstr.FromInt32(conflictPort)},
		}},
	}
	if _, err := e.cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the webhook's Service: %w", err)
	}
	// Serving before it is asked: the API server ignores a webhook that
	// does not answer, and the grader would count nothing.
	var last error
	err = wait.PollUntilContextTimeout(ctx, pollInterval, e.budget(time.Minute), true, func(ctx context.Context) (bool, error) {
		last = e.webhookServes(ctx)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the ConflictWindow webhook does not serve: %v (%w)", last, err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	all := admissionregistrationv1.AllScopes
	marked := func(o string) string {
		return fmt.Sprintf("(%[1]s != null && has(%[1]s.metadata) && has(%[1]s.metadata.annotations) && ('%[2]s' in %[1]s.metadata.annotations || '%[3]s' in %[1]s.metadata.annotations))",
			o, conflictwindow.UserKey, conflictwindow.UntilKey)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: conflictWebhook},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: conflictWebhook,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service:  &admissionregistrationv1.ServiceReference{Namespace: ns, Name: conflictService, Path: ptr.To(conflictwindow.ValidatePath), Port: ptr.To[int32](443)},
				CABundle: cert,
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}, Scope: &all},
			}},
			// Only a write of a marked object, or one that marks it, is
			// sent: the rest of the cluster's writes never wait for it.
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "marked", Expression: marked("object") + " || " + marked("oldObject")}},
			// A webhook that does not answer refuses nothing: the grader
			// then counts no refusal and says so; no write is held.
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](5),
		}},
	}
	if err := createOrReplace(ctx, e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations(), vwc); err != nil {
		return fmt.Errorf("the ConflictWindow webhook's configuration: %w", err)
	}
	return nil
}

// webhookServes says whether the webhook answers, through the API
// server's service proxy: it asks for the webhook's /metrics, whose count
// the grader does not read (conflictsRefused).
func (e *Engine) webhookServes(ctx context.Context) error {
	rc, err := e.cs.CoreV1().Services(install.Namespace).ProxyGet("https", conflictService, "443", conflictwindow.MetricsPath, nil).Stream(ctx)
	if err != nil {
		return fmt.Errorf("ask the ConflictWindow webhook: %w", err)
	}
	_, err = io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	rc.Close()
	return err
}

// replacer is a typed client's Create, Get and Update.
type replacer[T interface {
	*O
	metav1.Object
}, O any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// createOrReplace creates obj, or replaces the one of its name.
func createOrReplace[T interface {
	*O
	metav1.Object
}, O any](ctx context.Context, c replacer[T, O], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{FieldManager: fieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	old, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(old.GetResourceVersion())
	_, err = c.Update(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
	return err
}
