package controllab

import (
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/labs"
)

// Place is where a lab's controller runs, as its controller.yaml says:
// the Deployment whose pod the learner's program plays, and the
// ServiceAccount it acts as.
type Place struct {
	Namespace, Deployment, Container, ServiceAccount string
	// Selector picks the Deployment's pods, as a label selector string.
	Selector string
}

// LabPlace reads the Place of lab id's controller from its
// controller.yaml: the one Deployment there, with one container.
func LabPlace(id string) (Place, error) {
	m, err := labs.Manifest(id, "controller.yaml")
	if err != nil {
		return Place{}, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(m), 4096)
	var found *appsv1.Deployment
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return Place{}, fmt.Errorf("lab %s: controller.yaml: %w", id, err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		if found != nil {
			return Place{}, fmt.Errorf("lab %s: controller.yaml has two Deployments; want the one the controller plays", id)
		}
		found = &d
	}
	if found == nil || found.Spec.Selector == nil || len(found.Spec.Template.Spec.Containers) != 1 {
		return Place{}, fmt.Errorf("lab %s: controller.yaml needs one Deployment, with a selector and one container", id)
	}
	sa := found.Spec.Template.Spec.ServiceAccountName
	if sa == "" {
		return Place{}, fmt.Errorf("lab %s: the controller's Deployment names no ServiceAccount", id)
	}
	return Place{
		Namespace: found.Namespace, Deployment: found.Name,
		Container:      found.Spec.Template.Spec.Containers[0].Name,
		ServiceAccount: sa,
		Selector:       metav1.FormatLabelSelector(found.Spec.Selector),
	}, nil
}

// Release is where lab id's controller runs, as an operator release: what
// the engine's operatorReady, stopOperator and startOperator act on, and
// whose pod's log is the controller's where it runs as a pod.
func (pl Place) Release(id string) install.Release {
	return install.Release{Name: id, Namespace: pl.Namespace, Deployment: pl.Deployment, Container: pl.Container}
}
