package specs

import (
	"crypto/rand"

	corev1 "k8s.io/api/core/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

// Keys of the credentials Secret.
const (
	SecretKeyUsername = "username"
	SecretKeyPassword = "password"
)

// Secret builds the credentials Secret holding password. The reconciler
// creates it once with NewPassword and never rewrites it: changing the
// password would lock out every client.
func Secret(pgc *pgv1.PostgresCluster, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(pgc, SecretName(pgc)),
		Type:       corev1.SecretTypeBasicAuth,
		StringData: map[string]string{SecretKeyUsername: "postgres", SecretKeyPassword: password},
	}
}

// NewPassword returns a random 24-character password.
func NewPassword() string {
	return rand.Text()[:24]
}
