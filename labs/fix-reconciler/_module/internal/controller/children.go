package controller

import (
	"crypto/sha256"
	"encoding/hex"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	webappv1 "example.com/webapp/api/v1"
)

// Labels are the labels of a WebApp's children; the Deployment selects
// its pods by them.
func Labels(app *webappv1.WebApp) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "webapp",
		"app.kubernetes.io/instance":   app.Name,
		"app.kubernetes.io/managed-by": FieldOwner,
	}
}

// selector picks app's pods.
func selector(app *webappv1.WebApp) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "webapp", "app.kubernetes.io/instance": app.Name}
}

// setLabels sets want's labels on m, keeping the others.
func setLabels(m *metav1.ObjectMeta, want map[string]string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	for k, v := range want {
		m.Labels[k] = v
	}
}

// mutateDeployment sets the fields of dep that app decides, and only
// those: what the API server defaults stays as it is, or every pass
// would write.
func mutateDeployment(dep *appsv1.Deployment, app *webappv1.WebApp) {
	setLabels(&dep.ObjectMeta, Labels(app))
	replicas := app.Spec.Replicas
	dep.Spec.Replicas = &replicas
	if dep.Spec.Selector == nil { // immutable once made
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector(app)}
	}
	setLabels(&dep.Spec.Template.ObjectMeta, Labels(app))
	if dep.Spec.Template.Annotations == nil {
		dep.Spec.Template.Annotations = map[string]string{}
	}
	sum := sha256.Sum256([]byte(app.Spec.Content))
	dep.Spec.Template.Annotations[ContentHash] = hex.EncodeToString(sum[:])[:16]

	pod := &dep.Spec.Template.Spec
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "content" {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "content"})
		vol = &pod.Volumes[len(pod.Volumes)-1]
	}
	if vol.ConfigMap == nil {
		vol.VolumeSource = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}
	}
	vol.ConfigMap.Name = app.Name

	var c *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == "web" {
			c = &pod.Containers[i]
		}
	}
	if c == nil {
		pod.Containers = append(pod.Containers, corev1.Container{Name: "web"})
		c = &pod.Containers[len(pod.Containers)-1]
	}
	c.Image = app.Spec.Image
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: app.Spec.Port, Protocol: corev1.ProtocolTCP}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "content", MountPath: MountPath, ReadOnly: true}}
}

// mutateService sets the fields of svc that app decides.
func mutateService(svc *corev1.Service, app *webappv1.WebApp) {
	setLabels(&svc.ObjectMeta, Labels(app))
	svc.Spec.Selector = selector(app)
	svc.Spec.Ports = []corev1.ServicePort{{
		Name: "http", Protocol: corev1.ProtocolTCP,
		Port: app.Spec.Port, TargetPort: intstr.FromInt32(app.Spec.Port),
	}}
}
