// Package v1 holds the WebApp type of the labs.oplab.dev API group.
// +kubebuilder:object:generate=true
// +groupName=labs.oplab.dev
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the WebApp type.
	GroupVersion = schema.GroupVersion{Group: "labs.oplab.dev", Version: "v1"}

	// SchemeBuilder registers the types of this package.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
