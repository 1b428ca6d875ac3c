package fence

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"oplab.dev/oplab/internal/jwtclaims"
)

// TokenTTL is the lifetime of a learner's token. Kubeconfig mints a new
// one once less than half of it is left, so a kubeconfig it hands out is
// good for an hour at least: longer than the web console's longest watch.
const TokenTTL = 2 * time.Hour

// The learner's identity is a ServiceAccount's token, not a client
// certificate: a certificate would need the cluster's CA to sign it, and
// the embedded control plane runs no CSR signer (its controller-manager
// leaves it out); a TokenRequest works the same on every provider, and a
// token dies with its ServiceAccount.

// Config returns a configuration that reaches admin's API server as the
// learner, with a new token of TokenTTL. The fence must be installed.
func Config(ctx context.Context, admin *rest.Config) (*rest.Config, error) {
	token, _, err := mint(ctx, admin)
	if err != nil {
		return nil, err
	}
	ca, err := caData(admin)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host:        admin.Host,
		BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: ca, ServerName: admin.ServerName, Insecure: admin.Insecure,
		},
	}, nil
}

// KubeconfigPath is where the learner's kubeconfig of a cluster is kept:
// beside its admin kubeconfig, in the cluster's own directory, so it goes
// with the cluster.
func KubeconfigPath(adminKubeconfig string) string {
	return filepath.Join(filepath.Dir(adminKubeconfig), "learner."+filepath.Base(adminKubeconfig))
}

// Kubeconfig returns the learner's kubeconfig of the cluster admin
// reaches: the one kept at path while its token has more than half of its
// life left, else a new one, written there (private) first. A cluster made
// before it had a fence gets one. The kubeconfig holds a credential: hand
// it to the cluster's learner only, and never log it.
func Kubeconfig(ctx context.Context, admin *rest.Config, path string) ([]byte, error) {
	if data, err := os.ReadFile(path); err == nil && fresh(data, time.Now()) {
		return data, nil
	}
	token, err := mintOrInstall(ctx, admin)
	if err != nil {
		return nil, err
	}
	data, err := kubeconfig(admin, token)
	if err != nil {
		return nil, err
	}
	if err := writePrivate(path, data); err != nil {
		return nil, fmt.Errorf("write the learner's kubeconfig: %w", err)
	}
	return data, nil
}

// writePrivate replaces path with data, readable by its owner only. Two
// callers renewing at once each write a file of their own and rename it:
// the last one wins, whole.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// mintOrInstall mints a token, installing the fence first when the
// learner's ServiceAccount does not exist.
func mintOrInstall(ctx context.Context, admin *rest.Config) (string, error) {
	token, _, err := mint(ctx, admin)
	if !apierrors.IsNotFound(err) {
		return token, err
	}
	if err := Install(ctx, admin); err != nil {
		return "", err
	}
	token, _, err = mint(ctx, admin)
	return token, err
}

// mint asks the API server for a token of the learner's ServiceAccount.
func mint(ctx context.Context, admin *rest.Config) (string, time.Time, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return "", time.Time{}, err
	}
	secs := int64(TokenTTL / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}},
		metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("request a token for the learner: %w", err)
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}

// kubeconfig is a kubeconfig that reaches admin's API server with token
// only: everything inline, as the console hands it to kubectl alone.
func kubeconfig(admin *rest.Config, token string) ([]byte, error) {
	ca, err := caData(admin)
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["oplab"] = &clientcmdapi.Cluster{
		Server: admin.Host, CertificateAuthorityData: ca, TLSServerName: admin.ServerName, InsecureSkipTLSVerify: admin.Insecure,
	}
	cfg.AuthInfos[ServiceAccount] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["oplab"] = &clientcmdapi.Context{Cluster: "oplab", AuthInfo: ServiceAccount, Namespace: metav1.NamespaceDefault}
	cfg.CurrentContext = "oplab"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write the learner's kubeconfig: %w", err)
	}
	return data, nil
}

func caData(admin *rest.Config) ([]byte, error) {
	if len(admin.CAData) > 0 || admin.CAFile == "" {
		return admin.CAData, nil
	}
	ca, err := os.ReadFile(admin.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read the cluster's CA: %w", err)
	}
	return ca, nil
}

// fresh reports whether the token of a kubeconfig has more than half of
// its life left at now.
func fresh(kubeconfig []byte, now time.Time) bool {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return false
	}
	auth := cfg.AuthInfos[ServiceAccount]
	if auth == nil {
		return false
	}
	iat, exp, err := jwtclaims.Times(auth.Token)
	if err != nil {
		return false
	}
	return exp.Sub(now) > exp.Sub(iat)/2
}
