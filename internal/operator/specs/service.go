package specs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	pgv1 "oplab.dev/oplab/api/v1"
)

// Service builds the Service of role: <name>-rw selects the pod labelled
// role=primary, <name>-ro the pods labelled role=replica. A pod labelled
// unhealthy (a fenced primary) is behind neither.
func Service(pgc *pgv1.PostgresCluster, role string) *corev1.Service {
	sel := SelectorLabels(pgc)
	sel[pgv1.LabelRole] = role
	svc := &corev1.Service{
		ObjectMeta: objectMeta(pgc, ServiceName(pgc, role)),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: sel,
			Ports:    []corev1.ServicePort{postgresPort()},
		},
	}
	withHash(&svc.ObjectMeta, svc.Spec)
	return svc
}

// HeadlessService builds the StatefulSet's governing Service, which gives
// every instance pod a DNS name whatever its role.
func HeadlessService(pgc *pgv1.PostgresCluster) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: objectMeta(pgc, HeadlessServiceName(pgc)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 SelectorLabels(pgc),
			Ports:                    []corev1.ServicePort{postgresPort()},
			PublishNotReadyAddresses: true,
		},
	}
	withHash(&svc.ObjectMeta, svc.Spec)
	return svc
}

func postgresPort() corev1.ServicePort {
	return corev1.ServicePort{Name: "postgres", Port: PostgresPort, TargetPort: intstr.FromString("postgres"), Protocol: corev1.ProtocolTCP}
}
