package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebAppSpec is what the WebApp's owner asks for: a Deployment of Replicas
// pods running Image, serving Content on Port, and a Service in front.
type WebAppSpec struct {
	// Image is the container image of the app.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`

	// Replicas and Port are written even when 0 (no omitempty): a 0 left
	// out of an update would come back as the default.

	// Replicas is how many pods run it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas"`
	// Port is where the app listens, and the Service's port.
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port"`
	// Content is the page the app serves: the ConfigMap's index.html.
	// +optional
	Content string `json:"content,omitempty"`
}

// WebAppStatus is what the controller last saw.
type WebAppStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ReadyReplicas is how many of the Deployment's pods are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Conditions: Ready says whether every replica asked for is ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WebApp asks for a small web app: a ConfigMap with its page, a
// Deployment that serves it and a Service in front, all named after it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wa
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec"`
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppList is a list of WebApps.
// +kubebuilder:object:root=true
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WebApp{}, &WebAppList{})
}
