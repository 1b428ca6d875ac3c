package pods

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Labels of every object of a learner's cell on the host cluster.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelCluster   = "oplab.dev/cluster"
	cellApp        = "oplab-cell"
	managedBy      = "oplab"
)

const (
	apiPort       = 6443
	containerName = "controlplane"
	operatorName  = "operator"
	// consoleName is the container where the learner's console commands
	// run, by exec: within its own memory limit, beside the API server on
	// the pod's loopback and nothing else.
	consoleName = "console"
	dataMount   = "/var/lib/oplab"
	// OperatorDir is the reference operator's directory in a cell (its
	// token, kubeconfig and logs), on the cell's volume.
	OperatorDir = dataMount + "/operator"
	// The image's unprivileged user.
	cellUser = 65532
)

// objectName is the host objects' name for cluster name: StatefulSet,
// Service and NetworkPolicy "cell-<name>", its pod "cell-<name>-0".
func objectName(name string) string { return "cell-" + name }
func podName(name string) string    { return objectName(name) + "-0" }
func adminSecret(name string) string {
	return objectName(name) + "-admin"
}

// CellLabels select every cell.
func CellLabels() map[string]string { return map[string]string{LabelName: cellApp} }

func cellLabels(name string) map[string]string {
	return map[string]string{LabelName: cellApp, LabelManagedBy: managedBy, LabelCluster: name}
}

// selector picks the cell's pod; it is what the Service and the
// NetworkPolicy select.
func selector(name string) map[string]string {
	return map[string]string{LabelName: cellApp, LabelCluster: name}
}

// statefulSet is the learner's control plane: one pod, its state on a
// claim of its own that outlives the pod, started again from it when the
// pod is replaced.
func (p *Provider) statefulSet(name string) *appsv1.StatefulSet {
	o := p.opts
	claim := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: cellLabels(name)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: o.StorageSize},
			},
		},
	}
	if o.StorageClass != "" {
		claim.Spec.StorageClassName = ptr.To(o.StorageClass)
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: objectName(name), Namespace: o.Namespace, Labels: cellLabels(name)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: objectName(name),
			Selector:    &metav1.LabelSelector{MatchLabels: selector(name)},
			// The claim goes with the cluster, never with a pod.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: cellLabels(name)},
				Spec:       p.podSpec(name),
			},
		},
	}
}

// podSpec is the cell. Whatever the learner makes their cluster do runs
// here, so the pod holds nothing of the host: no ServiceAccount token (a
// learner can make KWOK serve any file the cell reads as a pod log), no
// service links, no host path, no privilege; its only writable places are
// its claim and an empty /tmp.
func (p *Provider) podSpec(name string) corev1.PodSpec {
	o := p.opts
	restricted := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "data", MountPath: dataMount},
		{Name: "tmp", MountPath: "/tmp"},
	}
	return corev1.PodSpec{
		AutomountServiceAccountToken:  ptr.To(false),
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](cellUser),
			RunAsGroup:     ptr.To[int64](cellUser),
			FSGroup:        ptr.To[int64](cellUser),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:            containerName,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/usr/local/bin/cellpod", "run", "-name", name, "-data", dataMount, "-listen", "0.0.0.0:6443"},
			Ports:           []corev1.ContainerPort{{Name: "apiserver", ContainerPort: apiPort}},
			// cellpod listens once the control plane answers.
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(apiPort)}},
				PeriodSeconds:    1,
				FailureThreshold: 3,
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: o.CPURequest, corev1.ResourceMemory: o.MemoryRequest},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: o.MemoryLimit},
			},
			SecurityContext: restricted,
			VolumeMounts:    mounts,
		}, {
			// The reference operator, once the learner's cluster has its
			// chart: it reaches the API server on the pod's loopback with
			// its ServiceAccount's token, as hostpod does on a laptop.
			Name:            operatorName,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/usr/local/bin/cellpod", "operator", "-name", name, "-data", dataMount, "-dir", OperatorDir},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: o.OperatorCPURequest, corev1.ResourceMemory: o.OperatorMemoryRequest},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: o.OperatorMemoryLimit},
			},
			SecurityContext: restricted,
			VolumeMounts:    mounts,
		}, {
			// The web console's commands: `cellpod console` by exec, kubectl
			// with the cluster's admin kubeconfig, read from the claim.
			Name:            consoleName,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/usr/local/bin/cellpod", "idle"},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: o.ConsoleCPURequest, corev1.ResourceMemory: o.ConsoleMemoryRequest},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: o.ConsoleMemoryLimit},
			},
			SecurityContext: restricted,
			VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: dataMount, ReadOnly: true},
				{Name: "tmp", MountPath: "/tmp"},
			},
		}},
		Volumes: []corev1.Volume{{
			Name:         "tmp",
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}},
		}},
	}
}

// service is how oplab's server reaches the learner's API server: a
// ClusterIP, never a LoadBalancer or an Ingress.
func (p *Provider) service(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: objectName(name), Namespace: p.opts.Namespace, Labels: cellLabels(name)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector(name),
			Ports: []corev1.ServicePort{{
				Name: "apiserver", Port: apiPort, TargetPort: intstr.FromInt32(apiPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// CellObjects returns the StatefulSet (its template is the cell's pod)
// and the NetworkPolicy that a backend with o makes for cluster name,
// without a host: for tests that evaluate the network wall where no CNI
// enforces it (package netpolicy).
func CellObjects(o Options, name string) (*appsv1.StatefulSet, *networkingv1.NetworkPolicy) {
	p := &Provider{opts: DefaultOptions(o)}
	return p.statefulSet(name), p.networkPolicy(name)
}

// networkPolicy is the cell's network wall on a CNI that enforces policy:
// only oplab's server pods reach the API port, and the cell reaches
// nothing — a webhook or an aggregated API the learner points at the host
// network, another learner or the server goes nowhere. Where the server
// runs in another namespace than the cells (the chart's), the peer names
// that namespace too: a podSelector alone would select the cells' own.
func (p *Provider) networkPolicy(name string) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	from := networkingv1.NetworkPolicyPeer{
		PodSelector: &metav1.LabelSelector{MatchLabels: p.opts.ServerLabels},
	}
	if p.opts.ServerNamespace != "" && p.opts.ServerNamespace != p.opts.Namespace {
		from.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{
			"kubernetes.io/metadata.name": p.opts.ServerNamespace,
		}}
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: objectName(name), Namespace: p.opts.Namespace, Labels: cellLabels(name)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector(name)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{from},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromInt32(apiPort))}},
			}},
			// No egress rule: nothing out.
		},
	}
}
