package engine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/conflictwindow"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/lab"
)

// The checks of a lab whose learner writes the controller (see
// lab.controllerCheckSpecs) judge behaviour: each makes a WebApp of its
// own, a probe with a name nobody knows in advance, changes it or its
// children as a user or a failure would, and watches the controller
// answer within the check's time. A hand with kubectl cannot keep up with
// a name it has never seen, and the source is never read.
//
// These names are the contract between the grader and the lab's module
// (labs/write-reconciler: its constants, its CRD); TestLabModuleNames
// holds them equal.
var webAppGVR = schema.GroupVersionResource{Group: "labs.oplab.dev", Version: "v1", Resource: "webapps"}

const (
	// controllerFieldOwner is the field manager of the controller's writes.
	controllerFieldOwner = "webapp-controller"
	// webAppFinalizer keeps a WebApp until it has left the registry.
	webAppFinalizer = "labs.oplab.dev/registry"
	// webAppRegistry is the ConfigMap, one per namespace, listing the
	// live WebApps by name.
	webAppRegistry = "webapp-registry"
	// webAppContentKey is the key of the page in a WebApp's ConfigMap.
	webAppContentKey = "index.html"
	// instanceLabel marks a WebApp's children with its name.
	instanceLabel = "app.kubernetes.io/instance"
	// probePrefix begins the name of every probe WebApp.
	probePrefix = "check-"
	// probeManager writes what a probe changes by hand.
	probeManager = "oplab-check"
)

// Defaults of lab.Probe and its windows.
const (
	defaultWithin = 15 * time.Second
	defaultWindow = 5 * time.Second
	// defaultConflictWindow is how long conflictsRetried has the
	// controller's writes refused: controller-runtime's back-off retries a
	// failed pass after 5 ms, doubling, so a pass that returns its error
	// is tried again about eight times within it and once soon after.
	defaultConflictWindow = 2 * time.Second
)

// webAppSpec is a WebApp's spec as the probes write and compare it.
type webAppSpec struct {
	Image    string `json:"image"`
	Replicas int32  `json:"replicas"`
	Port     int32  `json:"port"`
	Content  string `json:"content"`
}

// The specs a probe starts with and changes to: every field differs.
var (
	specA = webAppSpec{Image: "nginx:1.27", Replicas: 2, Port: 8080, Content: "first"}
	specB = webAppSpec{Image: "nginx:1.28", Replicas: 3, Port: 9090, Content: "second"}
)

// isProbe says whether p is the params of a controller check: it runs its
// scenario once, rather than being polled.
func isProbe(p any) bool {
	switch p.(type) {
	case *lab.ChildrenMatchSpec, *lab.ChildrenOwned, *lab.ChildrenRepaired, *lab.LevelTriggered,
		*lab.Idempotent, *lab.StatusTruthful, *lab.FinalizerRuns, *lab.NoHotLoop, *lab.ConflictsRetried:
		return true
	}
	return false
}

// controllerCheck returns the function of a controller check, or nil.
func controllerCheck(p any) checkFn {
	var (
		params lab.Probe
		run    func(pr *probe, ctx context.Context) (bool, string)
		// exclusive: no other probe may run beside it — its scenario
		// stops the controller, or times the controller's answers, which
		// the other probes' passes delay: the controller has one worker.
		exclusive bool
	)
	switch p := p.(type) {
	case *lab.ChildrenMatchSpec:
		params, run = p.Probe, (*probe).matchSpec
	case *lab.ChildrenOwned:
		params, run = p.Probe, (*probe).owned
	case *lab.ChildrenRepaired:
		params, run = p.Probe, (*probe).repaired
	case *lab.LevelTriggered:
		params, run, exclusive = p.Probe, (*probe).levelTriggered, true
	case *lab.Idempotent:
		w := orDefault(p.Window.Duration, defaultWindow)
		params, run = p.Probe, func(pr *probe, ctx context.Context) (bool, string) { return pr.idempotent(ctx, w) }
	case *lab.StatusTruthful:
		params, run = p.Probe, (*probe).statusTruthful
	case *lab.FinalizerRuns:
		params, run = p.Probe, (*probe).finalizer
	case *lab.NoHotLoop:
		w := orDefault(p.Window.Duration, defaultWindow)
		params, run = p.Probe, func(pr *probe, ctx context.Context) (bool, string) { return pr.noHotLoop(ctx, w, p.MaxWrites) }
	case *lab.ConflictsRetried:
		w := orDefault(p.Window.Duration, defaultConflictWindow)
		params, run, exclusive = p.Probe, func(pr *probe, ctx context.Context) (bool, string) { return pr.conflictsRetried(ctx, w) }, true
	default:
		return nil
	}
	return func(ctx context.Context, e *Engine, _ *Attempt) (bool, string) {
		unlock := e.op.probes.lock(exclusive)
		defer unlock()
		pr, err := e.newProbe(ctx, params)
		if err != nil {
			return false, err.Error()
		}
		defer pr.remove()
		return run(pr, ctx)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// probe is one WebApp a check made, and what it knows of it.
type probe struct {
	e         *Engine
	ns, name  string
	within    time.Duration // the lab's time, at the engine's pace
	react     time.Duration // the lab's time as it wrote it (repaired)
	uid       types.UID
	spec      webAppSpec
	converged time.Duration // how long the first convergence took
}

// newProbe makes a WebApp with specA under a new name.
func (e *Engine) newProbe(ctx context.Context, p lab.Probe) (*probe, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	asked := orDefault(p.Within.Duration, defaultWithin)
	pr := &probe{e: e, ns: p.Namespace, name: probePrefix + hex.EncodeToString(b[:]), within: e.budget(asked), react: asked, spec: specA}
	if pr.ns == "" {
		pr.ns = "default"
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "labs.oplab.dev/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": pr.name, "namespace": pr.ns, "labels": map[string]any{"oplab.dev/probe": "true"}},
		"spec":     specObject(specA),
	}}
	got, err := e.dyn.Resource(webAppGVR).Namespace(pr.ns).Create(ctx, u, metav1.CreateOptions{FieldManager: probeManager})
	if err != nil {
		return nil, fmt.Errorf("make a WebApp to try the controller on: %w", err)
	}
	pr.uid = got.GetUID()
	return pr, nil
}

func specObject(s webAppSpec) map[string]any {
	return map[string]any{"image": s.Image, "replicas": int64(s.Replicas), "port": int64(s.Port), "content": s.Content}
}

// remove deletes the probe and what it left: its finalizer if the
// controller does not take it off, its children, its registry entry.
func (pr *probe) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	apps := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns)
	_ = apps.Delete(ctx, pr.name, metav1.DeleteOptions{})
	_ = wait.PollUntilContextTimeout(ctx, pollInterval, 3*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := apps.Get(ctx, pr.name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	_, _ = apps.Patch(ctx, pr.name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: probeManager})
	sel := metav1.ListOptions{LabelSelector: instanceLabel + "=" + pr.name}
	cs := pr.e.cs
	_ = cs.AppsV1().Deployments(pr.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	_ = cs.CoreV1().ConfigMaps(pr.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	_ = cs.AppsV1().Deployments(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{})
	_ = cs.CoreV1().ConfigMaps(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{})
	_ = cs.CoreV1().Services(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{})
	patch, _ := json.Marshal(map[string]any{"data": map[string]any{pr.name: nil}})
	_, _ = cs.CoreV1().ConfigMaps(pr.ns).Patch(ctx, webAppRegistry, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: probeManager})
}

// setSpec changes the probe's spec, as a user would.
func (pr *probe) setSpec(ctx context.Context, s webAppSpec) error {
	patch, _ := json.Marshal(map[string]any{"spec": specObject(s)})
	if _, err := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: probeManager}); err != nil {
		return fmt.Errorf("change the spec of WebApp %s: %w", pr.name, err)
	}
	pr.spec = s
	return nil
}

// waitFor polls cond until it holds, for at most the probe's within. It
// returns how long it took, and cond's last reason when it never held.
func (pr *probe) waitFor(ctx context.Context, cond func(context.Context) (bool, string)) (time.Duration, string, bool) {
	return pr.waitWithin(ctx, pr.within, cond)
}

// waitWithin is waitFor with a time of its own.
func (pr *probe) waitWithin(ctx context.Context, within time.Duration, cond func(context.Context) (bool, string)) (time.Duration, string, bool) {
	start := time.Now()
	var why string
	// cond reads with the check's context, not the wait's: a read cut
	// short by the wait's deadline would say so instead of what it saw.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, within, true, func(context.Context) (bool, error) {
		var ok bool
		ok, why = cond(ctx)
		return ok, nil
	})
	return time.Since(start), why, err == nil
}

// matches says whether the probe's children are what its spec asks,
// written by the controller.
func (pr *probe) matches(ctx context.Context) (bool, string) {
	cs, s := pr.e.cs, pr.spec
	cm, err := cs.CoreV1().ConfigMaps(pr.ns).Get(ctx, pr.name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("no ConfigMap %s (%s)", pr.name, reasonOf(err))
	}
	if got := cm.Data[webAppContentKey]; got != s.Content {
		return false, fmt.Sprintf("ConfigMap %s has %s %q, the spec asks %q", pr.name, webAppContentKey, got, s.Content)
	}
	dep, err := cs.AppsV1().Deployments(pr.ns).Get(ctx, pr.name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("no Deployment %s (%s)", pr.name, reasonOf(err))
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != s.Replicas {
		return false, fmt.Sprintf("Deployment %s asks %s replicas, the spec %d", pr.name, replicasOf(dep), s.Replicas)
	}
	if !serves(dep, s) {
		return false, fmt.Sprintf("Deployment %s runs no container of image %s on port %d", pr.name, s.Image, s.Port)
	}
	svc, err := cs.CoreV1().Services(pr.ns).Get(ctx, pr.name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("no Service %s (%s)", pr.name, reasonOf(err))
	}
	if !hasPort(svc, s.Port) {
		return false, fmt.Sprintf("Service %s has no port %d", pr.name, s.Port)
	}
	for _, o := range []metav1.Object{cm, dep, svc} {
		if !writtenBy(o, controllerFieldOwner) {
			return false, fmt.Sprintf("%s %s was not written by the controller (field manager %s); managers: %s",
				kindOf(o), pr.name, controllerFieldOwner, strings.Join(managers(o), ", "))
		}
	}
	return true, fmt.Sprintf("ConfigMap, Deployment and Service %s match the spec", pr.name)
}

func reasonOf(err error) string {
	if apierrors.IsNotFound(err) {
		return "not found"
	}
	return err.Error()
}

func replicasOf(d *appsv1.Deployment) string {
	if d.Spec.Replicas == nil {
		return "no"
	}
	return fmt.Sprint(*d.Spec.Replicas)
}

func serves(d *appsv1.Deployment, s webAppSpec) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Image != s.Image {
			continue
		}
		for _, p := range c.Ports {
			if p.ContainerPort == s.Port {
				return true
			}
		}
	}
	return false
}

func hasPort(svc *corev1.Service, port int32) bool {
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

func writtenBy(o metav1.Object, manager string) bool {
	for _, mf := range o.GetManagedFields() {
		if mf.Manager == manager {
			return true
		}
	}
	return false
}

func managers(o metav1.Object) []string {
	var out []string
	for _, mf := range o.GetManagedFields() {
		out = append(out, mf.Manager)
	}
	return out
}

func kindOf(o metav1.Object) string {
	switch o.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Service:
		return "Service"
	}
	return fmt.Sprintf("%T", o)
}

// converge waits for the probe's children to match its spec.
func (pr *probe) converge(ctx context.Context, what string) (bool, string) {
	took, why, ok := pr.waitFor(ctx, pr.matches)
	if !ok {
		return false, fmt.Sprintf("%s: not within %s: %s", what, pr.within, why)
	}
	if pr.converged == 0 {
		pr.converged = took
	}
	return true, ""
}

// matchSpec: the children appear as the spec says, and follow a change.
func (pr *probe) matchSpec(ctx context.Context) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("a new WebApp %s got no children to match its spec", pr.name)); !ok {
		return false, why
	}
	first := pr.converged
	if err := pr.setSpec(ctx, specB); err != nil {
		return false, err.Error()
	}
	took, why, ok := pr.waitFor(ctx, pr.matches)
	if !ok {
		return false, fmt.Sprintf("WebApp %s's children matched its spec in %s, but not its change (image, replicas, port, content) within %s: %s", pr.name, tenths(first), pr.within, why)
	}
	return true, fmt.Sprintf("WebApp %s's ConfigMap, Deployment and Service matched its spec in %s, written by %s, and followed its change in %s", pr.name, tenths(first), controllerFieldOwner, tenths(took))
}

func tenths(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// owned: every child names the WebApp its controlling owner, and deleting
// the WebApp collects them.
func (pr *probe) owned(ctx context.Context) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	cs := pr.e.cs
	var objs []metav1.Object
	if cm, err := cs.CoreV1().ConfigMaps(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err == nil {
		objs = append(objs, cm)
	}
	if d, err := cs.AppsV1().Deployments(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err == nil {
		objs = append(objs, d)
	}
	if s, err := cs.CoreV1().Services(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err == nil {
		objs = append(objs, s)
	}
	for _, o := range objs {
		ref := metav1.GetControllerOfNoCopy(o)
		if ref == nil || ref.UID != pr.uid {
			return false, fmt.Sprintf("%s %s does not name WebApp %s its controller (owner references: %s)", kindOf(o), pr.name, pr.name, owners(o))
		}
	}
	// Deleted, the WebApp goes (its finalizer is another check's: it is
	// taken off here if the controller has not within the time), and the
	// garbage collector takes its children.
	apps := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns)
	if err := apps.Delete(ctx, pr.name, metav1.DeleteOptions{}); err != nil {
		return false, fmt.Sprintf("delete WebApp %s: %v", pr.name, err)
	}
	if _, _, gone := pr.waitFor(ctx, pr.gone); !gone {
		_, _ = apps.Patch(ctx, pr.name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: probeManager})
	}
	took, why, ok := pr.waitWithin(ctx, max(pr.within, pr.e.budget(gcDiscovery)), func(ctx context.Context) (bool, string) {
		for _, o := range objs {
			if exists(ctx, cs, kindOf(o), pr.ns, pr.name) {
				return false, fmt.Sprintf("%s %s is still there after WebApp %s was deleted", kindOf(o), pr.name, pr.name)
			}
		}
		return true, ""
	})
	if !ok {
		return false, why
	}
	return true, fmt.Sprintf("WebApp %s controls its ConfigMap, Deployment and Service; deleted, they were collected in %s", pr.name, tenths(took))
}

// gcDiscovery is how long the garbage collector may take to watch a
// resource made since it last read discovery: it reads it every 30 s
// (kube-controller-manager's sync period of the garbage collector), and
// until it watches WebApps it sees none deleted. Rightly owned children
// of a WebApp deleted soon after the lab's CRD was made wait for it.
const gcDiscovery = 35 * time.Second

func owners(o metav1.Object) string {
	var out []string
	for _, r := range o.GetOwnerReferences() {
		c := ""
		if r.Controller != nil && *r.Controller {
			c = ", controller"
		}
		out = append(out, fmt.Sprintf("%s %s%s", r.Kind, r.Name, c))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

func exists(ctx context.Context, cs kubernetes.Interface, kind, ns, name string) bool {
	var err error
	switch kind {
	case "ConfigMap":
		_, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	case "Deployment":
		_, err = cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	case "Service":
		_, err = cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return !apierrors.IsNotFound(err)
}

// gone says whether the probe's WebApp is gone.
func (pr *probe) gone(ctx context.Context) (bool, string) {
	_, err := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns).Get(ctx, pr.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, ""
	}
	return false, fmt.Sprintf("WebApp %s is still there", pr.name)
}

// settle waits until the controller has stopped writing the probe's
// WebApp (its status follows the Deployment's pods for a while): what
// comes after must be the answer to what the check does, not a pass that
// was already due.
func (pr *probe) settle(ctx context.Context) {
	last, since := "", time.Now()
	_, _, _ = pr.waitFor(ctx, func(ctx context.Context) (bool, string) {
		u, err := pr.webApp(ctx)
		if err != nil {
			return false, err.Error()
		}
		if rv := u.GetResourceVersion(); rv != last {
			last, since = rv, time.Now()
		}
		return time.Since(since) >= settleQuiet, ""
	})
}

// settleQuiet is how long a WebApp must go unwritten to count as settled.
const settleQuiet = 2 * time.Second

// breakChildren deletes the probe's Service and ConfigMap and scales its
// Deployment to zero, as a hand or a failure would. Down, not up: where
// pods are real (kind), nine probes at once each scaled up by a few
// replicas filled the node's 110 pods, and the controller's own new pod
// waited as Unschedulable ("Too many pods").
func (pr *probe) breakChildren(ctx context.Context) error {
	cs := pr.e.cs
	if err := cs.CoreV1().Services(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete Service %s: %w", pr.name, err)
	}
	if err := cs.CoreV1().ConfigMaps(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete ConfigMap %s: %w", pr.name, err)
	}
	patch := []byte(`{"spec":{"replicas":0}}`)
	if _, err := cs.AppsV1().Deployments(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: probeManager}); err != nil {
		return fmt.Errorf("scale Deployment %s: %w", pr.name, err)
	}
	return nil
}

// repaired: children deleted or changed while the controller runs are
// put right within the probe's time, as their change is seen, not on a
// timer. The children are broken twice: a pass already due (a failed one
// retried after its back-off, which a quiet WebApp does not show) may put
// the first break right by chance; once a pass has succeeded nothing is
// due, and only a watch on the children answers the second.
//
// Its time is the lab's as written, not stretched by the engine's pace:
// the answer is a watch event and a pass that writes three objects, which
// no container's start slows, and at a pace of 2 the default 15 s would
// be 30, long enough for a controller that repairs only on a 30 s timer.
func (pr *probe) repaired(ctx context.Context) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	var took [2]time.Duration
	for i := range took {
		pr.settle(ctx)
		if err := pr.breakChildren(ctx); err != nil {
			return false, err.Error()
		}
		var why string
		var ok bool
		if took[i], why, ok = pr.waitWithin(ctx, pr.react, pr.matches); !ok {
			if i > 0 {
				return false, fmt.Sprintf("WebApp %s's deleted Service and ConfigMap and its scaled Deployment were put right in %s, but not again within %s once broken a second time (a pass already due put them right, not a watch on them): %s", pr.name, tenths(took[0]), pr.react, why)
			}
			return false, fmt.Sprintf("WebApp %s's Service and ConfigMap were deleted and its Deployment scaled by hand; not put right within %s: %s", pr.name, pr.react, why)
		}
	}
	return true, fmt.Sprintf("WebApp %s's deleted Service and ConfigMap and its scaled Deployment were put right in %s, and again in %s", pr.name, tenths(took[0]), tenths(took[1]))
}

// levelTriggered: the controller is killed in the middle of the pass that
// answers a change of the spec; once it is back, all is put right. Then,
// with the controller stopped, the spec changes again and children are
// deleted and changed; once it starts, all is put right. Neither answer
// can come from the event that was missed: only from the state.
func (pr *probe) levelTriggered(ctx context.Context) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	pr.settle(ctx)
	e := pr.e
	killed, err := pr.killMidPass(ctx, specB)
	if err != nil {
		return false, err.Error()
	}
	crashed, why, ok := pr.waitFor(ctx, pr.matches)
	if !ok {
		return false, fmt.Sprintf("the controller was killed in the pass that answered a change of WebApp %s's spec (%s); within %s of the kill: %s", pr.name, killed, pr.within, why)
	}
	stopping := time.Now()
	if err := e.stopOperator(ctx); err != nil {
		return false, fmt.Sprintf("stop the controller: %v (after %s)", err, tenths(time.Since(stopping)))
	}
	stopped := time.Since(stopping)
	started := false
	defer func() {
		if !started {
			_ = e.startOperator(context.WithoutCancel(ctx))
		}
	}()
	if err := pr.breakChildren(ctx); err != nil {
		return false, err.Error()
	}
	if err := pr.setSpec(ctx, specA); err != nil {
		return false, err.Error()
	}
	starting := time.Now()
	if err := e.startOperator(ctx); err != nil {
		return false, fmt.Sprintf("start the controller: %v (after %s)", err, tenths(time.Since(starting)))
	}
	started = true
	start := time.Since(starting)
	took, why, ok := pr.waitFor(ctx, pr.matches)
	if !ok {
		return false, fmt.Sprintf("while the controller was stopped, WebApp %s's spec changed and its children were deleted and scaled; within %s of its start: %s", pr.name, pr.within, why)
	}
	return true, fmt.Sprintf("killed in the pass that answered a change of WebApp %s's spec (%s), the controller put it right %s after the kill; what changed while it was stopped (the spec again, its deleted and scaled children) it put right %s after it started (it took %s to stop and %s to start)",
		pr.name, killed, tenths(crashed), tenths(took), tenths(stopped), tenths(start))
}

// killMidPass changes the probe's spec to s and kills the controller
// (crashOperator) at the first write to a child that answers it. It says
// what the pass had written by then.
func (pr *probe) killMidPass(ctx context.Context, s webAppSpec) (string, error) {
	cs := pr.e.cs
	byName := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", pr.name).String()}
	from := func(rv string) metav1.ListOptions { o := byName; o.ResourceVersion = rv; return o }
	// Each watch starts where its list ended: the events are writes that
	// come after it, not the children as they are.
	// The ConfigMaps all: the registry's entry, which the reference
	// solution writes first, is a write of the pass too.
	cms, err := cs.CoreV1().ConfigMaps(pr.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list the ConfigMaps of %s: %w", pr.ns, err)
	}
	deps, err := cs.AppsV1().Deployments(pr.ns).List(ctx, byName)
	if err != nil {
		return "", fmt.Errorf("list WebApp %s's Deployment: %w", pr.name, err)
	}
	svcs, err := cs.CoreV1().Services(pr.ns).List(ctx, byName)
	if err != nil {
		return "", fmt.Errorf("list WebApp %s's Service: %w", pr.name, err)
	}
	generation := int64(0)
	for _, d := range deps.Items {
		generation = d.Generation
	}
	wctx, cancel := context.WithTimeout(ctx, pr.within)
	defer cancel()
	cmw, err := cs.CoreV1().ConfigMaps(pr.ns).Watch(wctx, metav1.ListOptions{ResourceVersion: cms.ResourceVersion})
	if err != nil {
		return "", fmt.Errorf("watch the ConfigMaps of %s: %w", pr.ns, err)
	}
	defer cmw.Stop()
	depw, err := cs.AppsV1().Deployments(pr.ns).Watch(wctx, from(deps.ResourceVersion))
	if err != nil {
		return "", fmt.Errorf("watch WebApp %s's Deployment: %w", pr.name, err)
	}
	defer depw.Stop()
	svcw, err := cs.CoreV1().Services(pr.ns).Watch(wctx, from(svcs.ResourceVersion))
	if err != nil {
		return "", fmt.Errorf("watch WebApp %s's Service: %w", pr.name, err)
	}
	defer svcw.Stop()

	if err := pr.setSpec(ctx, s); err != nil {
		return "", err
	}
	changed := time.Now()
	var first string
	for first == "" {
		var (
			ev   watch.Event
			open bool
			kind string
		)
		select {
		case <-wctx.Done():
			return "", fmt.Errorf("WebApp %s's spec changed, and none of its children was written within %s", pr.name, pr.within)
		case ev, open = <-cmw.ResultChan():
			kind = "ConfigMap"
		case ev, open = <-svcw.ResultChan():
			kind = "Service"
		case ev, open = <-depw.ResultChan():
			kind = "Deployment"
		}
		switch {
		case !open:
			return "", fmt.Errorf("the watch of WebApp %s's %s ended", pr.name, kind)
		case ev.Type == watch.Error:
			return "", fmt.Errorf("the watch of WebApp %s's %s failed: %v", pr.name, kind, apierrors.FromObject(ev.Object))
		case kind == "ConfigMap":
			cm, ok := ev.Object.(*corev1.ConfigMap)
			switch {
			case !ok:
			case cm.Name == pr.name:
				first = kind
			case cm.Name == webAppRegistry && cm.Data[pr.name] == s.Image:
				first = "registry entry"
			}
		case kind == "Service":
			first = kind
		default:
			// Its status moves with its pods: only a new generation is
			// the controller's write.
			if d, ok := ev.Object.(*appsv1.Deployment); ok && d.Generation > generation {
				first = kind
			}
		}
	}
	if err := pr.e.crashOperator(ctx); err != nil {
		return "", fmt.Errorf("kill the controller: %w", err)
	}
	after := time.Since(changed)
	// What the pass had written when the kill landed.
	var todo []string
	if cm, err := cs.CoreV1().ConfigMaps(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err != nil || cm.Data[webAppContentKey] != s.Content {
		todo = append(todo, "ConfigMap")
	}
	if d, err := cs.AppsV1().Deployments(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != s.Replicas || !serves(d, s) {
		todo = append(todo, "Deployment")
	}
	if svc, err := cs.CoreV1().Services(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err != nil || !hasPort(svc, s.Port) {
		todo = append(todo, "Service")
	}
	if len(todo) == 0 {
		return fmt.Sprintf("killed %s after the change, at its write of the %s: it had written every child by then", after.Round(time.Millisecond), first), nil
	}
	return fmt.Sprintf("killed %s after the change, at its write of the %s, with %s still to write", after.Round(time.Millisecond), first, strings.Join(todo, " and ")), nil
}

// childState is what a write to a child changes: its identity, and the
// resourceVersion (the Deployment's generation: its status moves with its
// pods, which is not the controller's write).
type childState struct{ uid, version string }

func (pr *probe) children(ctx context.Context) (map[string]childState, error) {
	cs := pr.e.cs
	out := map[string]childState{}
	// The children named after the WebApp, whatever their labels...
	if o, err := cs.CoreV1().ConfigMaps(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err == nil {
		out["ConfigMap "+o.Name] = childState{string(o.UID), o.ResourceVersion}
	}
	if o, err := cs.AppsV1().Deployments(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err == nil {
		out["Deployment "+o.Name] = childState{string(o.UID), fmt.Sprintf("generation %d", o.Generation)}
	}
	if o, err := cs.CoreV1().Services(pr.ns).Get(ctx, pr.name, metav1.GetOptions{}); err == nil {
		out["Service "+o.Name] = childState{string(o.UID), o.ResourceVersion}
	}
	// ... and any other object labelled as one of its children.
	sel := metav1.ListOptions{LabelSelector: instanceLabel + "=" + pr.name}
	cms, err := cs.CoreV1().ConfigMaps(pr.ns).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range cms.Items {
		out["ConfigMap "+o.Name] = childState{string(o.UID), o.ResourceVersion}
	}
	deps, err := cs.AppsV1().Deployments(pr.ns).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range deps.Items {
		out["Deployment "+o.Name] = childState{string(o.UID), fmt.Sprintf("generation %d", o.Generation)}
	}
	svcs, err := cs.CoreV1().Services(pr.ns).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, o := range svcs.Items {
		out["Service "+o.Name] = childState{string(o.UID), o.ResourceVersion}
	}
	return out, nil
}

// idempotent: once converged, a window of passes (the probe's own writes
// bring some) leaves the children as they are.
func (pr *probe) idempotent(ctx context.Context, window time.Duration) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	pr.settle(ctx)
	before, err := pr.children(ctx)
	if err != nil {
		return false, fmt.Sprintf("list WebApp %s's children: %v", pr.name, err)
	}
	// Converged, each child is there: one gone again is being made anew
	// (deleted and created on every pass), which a window that never
	// sees it cannot catch.
	for _, kind := range []string{"ConfigMap", "Deployment", "Service"} {
		if _, ok := before[kind+" "+pr.name]; !ok {
			return false, fmt.Sprintf("WebApp %s's %s %s matched its spec, then was gone with nothing changed: is it deleted and made again on every pass?", pr.name, kind, pr.name)
		}
	}
	// A label change brings the controller a pass with nothing to do.
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{"oplab.dev/poke":"%d"}}}`, time.Now().UnixNano())
	if _, err := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: probeManager}); err != nil {
		return false, fmt.Sprintf("touch WebApp %s: %v", pr.name, err)
	}
	if !sleep(ctx, window) {
		return false, ctx.Err().Error()
	}
	after, err := pr.children(ctx)
	if err != nil {
		return false, fmt.Sprintf("list WebApp %s's children: %v", pr.name, err)
	}
	var changed []string
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			changed = append(changed, name+" was deleted")
		case a.uid != b.uid:
			changed = append(changed, name+" was made again")
		case a.version != b.version:
			changed = append(changed, fmt.Sprintf("%s was written (%s → %s)", name, b.version, a.version))
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			changed = append(changed, name+" was made")
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return false, fmt.Sprintf("WebApp %s had converged, yet in %s with nothing to change: %s", pr.name, window, strings.Join(changed, "; "))
	}
	return true, fmt.Sprintf("WebApp %s's %d children were not written in %s of passes with nothing to change", pr.name, len(after), window)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// webApp reads the probe's WebApp.
func (pr *probe) webApp(ctx context.Context) (*unstructured.Unstructured, error) {
	return pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns).Get(ctx, pr.name, metav1.GetOptions{})
}

// webAppStatus is the part of a WebApp's status the checks read.
type webAppStatus struct {
	ObservedGeneration int64              `json:"observedGeneration"`
	ReadyReplicas      int32              `json:"readyReplicas"`
	Conditions         []metav1.Condition `json:"conditions"`
}

func statusOf(u *unstructured.Unstructured) (webAppStatus, error) {
	var s webAppStatus
	raw, ok := u.Object["status"]
	if !ok {
		return s, nil
	}
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.(map[string]any), &s)
	return s, err
}

// truthful says whether the WebApp's status reports the generation it is
// at and a Ready condition that says what its Deployment has.
func (pr *probe) truthful(ctx context.Context) (bool, string) {
	u, err := pr.webApp(ctx)
	if err != nil {
		return false, fmt.Sprintf("read WebApp %s: %v", pr.name, err)
	}
	st, err := statusOf(u)
	if err != nil {
		return false, fmt.Sprintf("WebApp %s's status: %v", pr.name, err)
	}
	if st.ObservedGeneration != u.GetGeneration() {
		return false, fmt.Sprintf("WebApp %s is at generation %d, its status.observedGeneration says %d", pr.name, u.GetGeneration(), st.ObservedGeneration)
	}
	var ready *metav1.Condition
	for i := range st.Conditions {
		if st.Conditions[i].Type == "Ready" {
			ready = &st.Conditions[i]
		}
	}
	if ready == nil {
		return false, fmt.Sprintf("WebApp %s's status has no Ready condition", pr.name)
	}
	if ready.ObservedGeneration != 0 && ready.ObservedGeneration != u.GetGeneration() {
		return false, fmt.Sprintf("WebApp %s's Ready condition was set at generation %d, it is at %d", pr.name, ready.ObservedGeneration, u.GetGeneration())
	}
	dep, err := pr.e.cs.AppsV1().Deployments(pr.ns).Get(ctx, pr.name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("no Deployment %s (%s)", pr.name, reasonOf(err))
	}
	isReady := dep.Status.ObservedGeneration >= dep.Generation && dep.Status.ReadyReplicas >= pr.spec.Replicas
	if (ready.Status == metav1.ConditionTrue) != isReady {
		return false, fmt.Sprintf("WebApp %s says Ready=%s, but its Deployment has %d of %d replicas ready", pr.name, ready.Status, dep.Status.ReadyReplicas, pr.spec.Replicas)
	}
	if st.ReadyReplicas != dep.Status.ReadyReplicas {
		return false, fmt.Sprintf("WebApp %s's status.readyReplicas says %d, its Deployment has %d", pr.name, st.ReadyReplicas, dep.Status.ReadyReplicas)
	}
	return true, fmt.Sprintf("observedGeneration %d, Ready=%s, %d replicas ready", st.ObservedGeneration, ready.Status, st.ReadyReplicas)
}

// statusTruthful: the status follows the WebApp's generation and its
// Deployment, before and after a change of the spec.
func (pr *probe) statusTruthful(ctx context.Context) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	if _, why, ok := pr.waitFor(ctx, pr.truthful); !ok {
		return false, fmt.Sprintf("not within %s: %s", pr.within, why)
	}
	if err := pr.setSpec(ctx, specB); err != nil {
		return false, err.Error()
	}
	took, why, ok := pr.waitFor(ctx, pr.truthful)
	if !ok {
		return false, fmt.Sprintf("after a change of WebApp %s's spec, not within %s: %s", pr.name, pr.within, why)
	}
	return true, fmt.Sprintf("WebApp %s's status followed a change of its spec in %s: %s", pr.name, tenths(took), why)
}

// registered says whether the probe is in its namespace's registry.
func (pr *probe) registered(ctx context.Context) (bool, error) {
	cm, err := pr.e.cs.CoreV1().ConfigMaps(pr.ns).Get(ctx, webAppRegistry, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, ok := cm.Data[pr.name]
	return ok, nil
}

// finalizer: the WebApp is registered and holds the finalizer; deleted, it
// leaves the registry and goes.
func (pr *probe) finalizer(ctx context.Context) (bool, string) {
	_, why, ok := pr.waitFor(ctx, func(ctx context.Context) (bool, string) {
		u, err := pr.webApp(ctx)
		if err != nil {
			return false, fmt.Sprintf("read WebApp %s: %v", pr.name, err)
		}
		if !slices.Contains(u.GetFinalizers(), webAppFinalizer) {
			return false, fmt.Sprintf("WebApp %s has no finalizer %s", pr.name, webAppFinalizer)
		}
		if in, err := pr.registered(ctx); err != nil || !in {
			return false, fmt.Sprintf("WebApp %s is not in ConfigMap %s", pr.name, webAppRegistry)
		}
		return true, ""
	})
	if !ok {
		return false, fmt.Sprintf("not within %s: %s", pr.within, why)
	}
	if err := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns).Delete(ctx, pr.name, metav1.DeleteOptions{}); err != nil {
		return false, fmt.Sprintf("delete WebApp %s: %v", pr.name, err)
	}
	took, why, ok := pr.waitFor(ctx, func(ctx context.Context) (bool, string) {
		if in, err := pr.registered(ctx); err != nil || in {
			return false, fmt.Sprintf("deleted, WebApp %s is still in ConfigMap %s", pr.name, webAppRegistry)
		}
		if gone, _ := pr.gone(ctx); !gone {
			return false, fmt.Sprintf("deleted, WebApp %s left the registry but is still there: its finalizer %s was not removed", pr.name, webAppFinalizer)
		}
		return true, ""
	})
	if !ok {
		return false, fmt.Sprintf("not within %s: %s", pr.within, why)
	}
	return true, fmt.Sprintf("deleted, WebApp %s left ConfigMap %s and was gone in %s", pr.name, webAppRegistry, tenths(took))
}

// noHotLoop: once the WebApp has converged, it is not written again while
// nothing changes: within the probe's time there is a window with at
// most maxWrites writes to it.
func (pr *probe) noHotLoop(ctx context.Context, window time.Duration, maxWrites int) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	var writes []time.Time
	last := ""
	deadline := time.Now().Add(pr.within + window)
	start := time.Now()
	for {
		u, err := pr.webApp(ctx)
		if err != nil {
			return false, fmt.Sprintf("read WebApp %s: %v", pr.name, err)
		}
		now := time.Now()
		if rv := u.GetResourceVersion(); rv != last {
			if last != "" {
				writes = append(writes, now)
			}
			last = rv
		}
		// The writes within the last window.
		n := 0
		for _, w := range writes {
			if now.Sub(w) < window {
				n++
			}
		}
		if now.Sub(start) >= window && n <= maxWrites {
			return true, fmt.Sprintf("WebApp %s was written %d time(s) in %s with nothing changing", pr.name, n, window)
		}
		if now.After(deadline) {
			return false, fmt.Sprintf("WebApp %s had converged, yet it was written %d times in %s with nothing changing (%d in all in %s): a pass that writes brings the next",
				pr.name, n, window, len(writes), tenths(now.Sub(start)))
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return false, ctx.Err().Error()
		}
	}
}

// probeLock lets controller checks run side by side, except one that
// stops the controller or times its retries, which runs alone.
type probeLock struct{ mu sync.RWMutex }

func (l *probeLock) lock(exclusive bool) (unlock func()) {
	if exclusive {
		l.mu.Lock()
		return l.mu.Unlock
	}
	l.mu.RLock()
	return l.mu.RUnlock
}

// The marks of kube-controlplane's ConflictWindow admission plugin
// (hack/tools/controlplane/cmd/kube-controlplane/conflictwindow.go), and
// of the webhook that stands in for it on kind (package conflictwindow):
// until the time, every write of the marked object by the user is refused
// with 409 Conflict. Only the cluster's admin sets them. The counter of
// the writes refused is on the API server's /metrics: the plugin's, or
// the API server's count of the webhook's rejections.
const (
	conflictUserKey   = conflictwindow.UserKey
	conflictUntilKey  = conflictwindow.UntilKey
	conflictsRefused  = conflictwindow.RefusedMetric
	serviceAccountFmt = "system:serviceaccount:%s:%s"
)

// conflictsRetried: for a while after a change of the spec, the API
// server answers every write of the controller to the WebApp and its
// children with a conflict, as it does a write that lost a race; once it
// stops, all is put right. A refused write changes nothing, so no event
// follows it: only a pass that returned its error, and so was retried
// after a back-off, answers. One that logs the error and returns nil
// waits for the next change, which does not come — or for an event it did
// not ask for (a child's status), which may come after the window and put
// all right. So the check also wants the retries: the back-off doubles,
// so a controller that returns the error is refused after the window's
// first third again, where one that drops it was refused in one pass. A
// controller whose first write came after that third (a busy one answers
// late) is tried again with a window twice as long, twice at the most.
// It runs alone: beside the other probes, whose passes take the
// controller's one worker, a retry that returned its error came seconds
// late, after the window, as a dropped one's stray pass does.
func (pr *probe) conflictsRetried(ctx context.Context, window time.Duration) (bool, string) {
	if ok, why := pr.converge(ctx, fmt.Sprintf("WebApp %s got no children", pr.name)); !ok {
		return false, why
	}
	pl, err := controllab.LabPlace(pr.e.labID())
	if err != nil {
		return false, err.Error()
	}
	user := fmt.Sprintf(serviceAccountFmt, pl.Namespace, pl.ServiceAccount)
	var late []string
	// A slow controller (its cell is capped, and busy) may answer late in
	// a window; each window is twice the one before.
	for i, spec := range []webAppSpec{specB, specA, specB} {
		pr.settle(ctx)
		w := window << i
		r, err := pr.refuseAndChange(ctx, user, w, spec)
		if err != nil {
			return false, err.Error()
		}
		switch {
		case !r.converged:
			return false, fmt.Sprintf("WebApp %s's spec changed while the API server refused the controller's writes to it and its children with a conflict for %s (%d refused); not put right within %s of the change: a refused write's error must be returned, so that the pass runs again: %s",
				pr.name, r.left, r.refused, pr.within, r.why)
		case r.refused > 0 && r.took < r.left:
			return true, fmt.Sprintf("%sthe API server refused %d of the controller's writes to WebApp %s and its children with a conflict for %s after its spec changed; all was put right %s after the change, before the refusals stopped (made again, unmarked)",
				strings.Join(late, ""), r.refused, pr.name, r.left, tenths(r.took))
		case r.refused > 0 && r.early > 0 && r.refused > r.early:
			return true, fmt.Sprintf("%sthe API server refused %d of the controller's writes to WebApp %s and its children with a conflict for %s after its spec changed, %d of them after its first third: the controller tried again; all was put right %s after the change, after the refusals stopped",
				strings.Join(late, ""), r.refused, pr.name, r.left, r.refused-r.early, tenths(r.took))
		case r.refused > 0 && r.early > 0:
			return false, fmt.Sprintf("%sthe API server refused %d of the controller's writes to WebApp %s and its children with a conflict in the first third of the %s after its spec changed, and none after: the controller did not try again while it refused; all was put right %s after the change, by a pass something else began. A refused write's error must be returned, so that the pass runs again",
				strings.Join(late, ""), r.refused, pr.name, r.left, tenths(r.took))
		case r.refused > 0:
			// Its first refused write came after the first third: too
			// late to see it try again in this window.
			late = append(late, fmt.Sprintf("(the controller's first write came after the first third of a %s window: too late to see it try again) ", r.left))
		case r.left <= 0:
			late = append(late, fmt.Sprintf("(marking WebApp %s took longer than the %s window) ", pr.name, w))
		default:
			late = append(late, fmt.Sprintf("(no write came in the first %s window: the controller answered after %s) ", r.left, tenths(r.took)))
		}
	}
	return false, fmt.Sprintf("%sWebApp %s's spec changed three times while the API server would refuse the controller's writes to it with a conflict, but the controller's writes never came early enough in the window to see whether it tries again", strings.Join(late, ""), pr.name)
}

// conflictRound is what one window of conflictsRetried saw.
type conflictRound struct {
	refused   int64         // the controller's writes refused
	early     int64         // of those, in the first third of left
	left      time.Duration // the window, from the change of the spec
	took      time.Duration // from the change to the children matching it
	converged bool
	why       string // what did not match, when the children never did
}

// refuseAndChange marks the probe's children and WebApp so that user's
// writes of them are refused for window, changes its spec to s in the
// same write as the WebApp's mark (no pass comes between), and waits for
// the children to match.
func (pr *probe) refuseAndChange(ctx context.Context, user string, window time.Duration, s webAppSpec) (conflictRound, error) {
	before, known, err := pr.e.conflictsRefused(ctx)
	if err != nil {
		return conflictRound{}, err
	}
	if !known {
		return conflictRound{}, errors.New("the API server does not refuse writes on purpose: it has no ConflictWindow admission plugin (oplab's kube-controlplane has)")
	}
	until := time.Now().Add(window)
	marks := map[string]any{conflictUserKey: user, conflictUntilKey: until.UTC().Format(time.RFC3339Nano)}
	if err := pr.markChildren(ctx, marks); err != nil {
		return conflictRound{}, err
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": marks}, "spec": specObject(s)})
	if _, err := pr.e.dyn.Resource(webAppGVR).Namespace(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: probeManager}); err != nil {
		return conflictRound{}, fmt.Errorf("change the spec of WebApp %s: %w", pr.name, err)
	}
	changed := time.Now()
	pr.spec = s
	var r conflictRound
	// What is left of the window once the spec changed: the marks took
	// some of it.
	r.left = until.Sub(changed).Round(100 * time.Millisecond)
	// The refusals of the window's first third, counted apart: a
	// controller that returns a refused write's error tries again with a
	// backoff that doubles, so it is refused in the last two thirds too
	// (its last try before the window ends comes in its second half); one
	// that drops the error is refused in one pass, in one part, and is put
	// right only if something else begins a pass after the window.
	third := make(chan int64, 1)
	go func() {
		t := time.NewTimer(time.Until(changed.Add(until.Sub(changed) / 3)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			third <- -1
			return
		case <-t.C:
		}
		n, _, err := pr.e.conflictsRefused(ctx)
		if err != nil {
			n = -1
		}
		third <- n
	}()
	r.took, r.why, r.converged = pr.waitFor(ctx, pr.matches)
	mid := <-third
	if mid < 0 {
		return conflictRound{}, errors.New("read the API server's metrics a third into the window")
	}
	// The window has passed or the children match: a wait for the window
	// to end, when they matched before it did, so no refusal is missed.
	if d := time.Until(until); d > 0 && r.converged {
		select {
		case <-ctx.Done():
			return conflictRound{}, ctx.Err()
		case <-time.After(d):
		}
	}
	after, _, err := pr.e.conflictsRefused(ctx)
	if err != nil {
		return conflictRound{}, err
	}
	r.refused, r.early = after-before, mid-before
	return r, nil
}

// markChildren puts the ConflictWindow plugin's marks on the probe's
// children.
func (pr *probe) markChildren(ctx context.Context, marks map[string]any) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": marks}})
	opts := metav1.PatchOptions{FieldManager: probeManager}
	cs := pr.e.cs
	if _, err := cs.CoreV1().ConfigMaps(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, opts); err != nil {
		return fmt.Errorf("mark ConfigMap %s: %w", pr.name, err)
	}
	if _, err := cs.AppsV1().Deployments(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, opts); err != nil {
		return fmt.Errorf("mark Deployment %s: %w", pr.name, err)
	}
	if _, err := cs.CoreV1().Services(pr.ns).Patch(ctx, pr.name, types.MergePatchType, patch, opts); err != nil {
		return fmt.Errorf("mark Service %s: %w", pr.name, err)
	}
	return nil
}

// conflictsRefused reads how many writes were refused on purpose, as the
// API server counts them: its ConflictWindow plugin's counter or, where it
// has none, its count of the conflictwindow webhook's 409 answers
// (ensureConflictWindow); known is false when neither refuses any. Both
// are the API server's own: the webhook is a Service any pod of the
// cluster can send a review to, so what the webhook counts itself is not
// evidence.
func (e *Engine) conflictsRefused(ctx context.Context) (n int64, known bool, err error) {
	r, err := e.apiServerRefusals(ctx)
	if err != nil || r.pluginKnown {
		return r.plugin, r.pluginKnown, err
	}
	// The API server has a series of a webhook's rejections only after
	// its first: whether the webhook is there says whether a zero is one.
	_, err = e.cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, conflictWebhook, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("the ConflictWindow webhook's configuration: %w", err)
	}
	return r.webhook, true, nil
}

// apiServerRefusals reads the API server's counts of writes refused on
// purpose from its /metrics.
func (e *Engine) apiServerRefusals(ctx context.Context) (refusals, error) {
	rc, err := e.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").Stream(ctx)
	if err != nil {
		return refusals{}, fmt.Errorf("read the API server's metrics: %w", err)
	}
	return readRefusals(rc)
}

// refusals are an API server's counts of writes refused on purpose.
type refusals struct {
	plugin      int64 // by its ConflictWindow admission plugin
	pluginKnown bool  // it has the plugin
	webhook     int64 // by the conflictwindow webhook, with 409
}

// webhookRejections is the API server's counter of what admission webhooks
// refused, by webhook, operation and status code.
const webhookRejections = "apiserver_admission_webhook_rejection_count"

// readRefusals reads the counts of refused writes from metrics in
// Prometheus's text format, and closes it. The metrics are read as a
// stream, a line at a time and at most maxMetricsBytes, so that a learner
// who makes their API server's metrics large (many resources, many
// series) does not make the grader hold them: only the lines of the two
// counters are kept and parsed.
func readRefusals(rc io.ReadCloser) (refusals, error) {
	defer rc.Close()
	var kept bytes.Buffer
	sc := bufio.NewScanner(io.LimitReader(rc, maxMetricsBytes))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() && kept.Len() < 1<<20 {
		line := bytes.TrimSpace(sc.Bytes())
		for _, name := range []string{conflictsRefused, webhookRejections} {
			if rest, ok := bytes.CutPrefix(line, []byte(name)); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '{') {
				kept.Write(line)
				kept.WriteByte('\n')
			}
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return refusals{}, fmt.Errorf("read the metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(&kept)
	if err != nil {
		return refusals{}, fmt.Errorf("the metrics of refused writes: %w", err)
	}
	var r refusals
	if f := families[conflictsRefused]; f != nil && len(f.GetMetric()) > 0 {
		r.plugin, r.pluginKnown = int64(sampleValue(f.GetMetric()[0])), true
	}
	want := map[string]string{"name": conflictWebhook, "type": "validating", "error_type": "no_error", "rejection_code": "409"}
	for _, m := range families[webhookRejections].GetMetric() {
		matched := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				matched++
			}
		}
		if matched == len(want) {
			r.webhook += int64(sampleValue(m))
		}
	}
	return r, nil
}

// sampleValue is a sample's value, whatever type its family declared (the
// lines are parsed without their TYPE, as untyped).
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// maxMetricsBytes bounds what conflictsRefused reads of /metrics, many
// times what a lab's cluster serves. Past it, or past a line of over
// 1 MiB, the counter counts as missing, and the check says so.
const maxMetricsBytes = 32 << 20
