package hostpod

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"oplab.dev/oplab/internal/jwtclaims"
)

// TokenOptions say how to keep a ServiceAccount token fresh, as a kubelet
// keeps a projected token: a new one is minted when the current one has used
// four fifths of its lifetime. The program's client re-reads the file (as
// client-go does every minute for a kubeconfig's tokenFile), so it never
// holds an expired token.
type TokenOptions struct {
	Client         kubernetes.Interface
	Namespace      string
	ServiceAccount string
	// File holds the token; it is replaced atomically and never logged.
	File string
	// TTL is the lifetime asked for each new token.
	TTL time.Duration
}

// retryToken is the pause after a failed refresh.
const retryToken = 30 * time.Second

// RefreshTokens keeps o.File fresh until ctx ends. Failures are reported to
// report and retried.
func RefreshTokens(ctx context.Context, o TokenOptions, report func(error)) {
	for {
		wait := retryToken
		exp, issued, err := tokenTimes(o.File)
		if err == nil {
			// Refresh at 80% of the lifetime.
			wait = time.Until(issued.Add(exp.Sub(issued) * 4 / 5))
		}
		if err != nil || wait <= 0 {
			if err := mintToken(ctx, o); err != nil {
				report(err)
				wait = retryToken
			} else {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// MintToken writes a new token of the ServiceAccount to o.File now.
func MintToken(ctx context.Context, o TokenOptions) error { return mintToken(ctx, o) }

func mintToken(ctx context.Context, o TokenOptions) error {
	secs := int64(o.TTL / time.Second)
	tr, err := o.Client.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, o.ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("request a token for %s/%s: %w", o.Namespace, o.ServiceAccount, err)
	}
	tmp := o.File + ".tmp"
	if err := os.WriteFile(tmp, []byte(tr.Status.Token), 0o600); err != nil {
		return fmt.Errorf("write token: %w", err)
	}
	if err := os.Rename(tmp, o.File); err != nil {
		return fmt.Errorf("write token: %w", err)
	}
	return nil
}

// tokenTimes reads the exp and iat claims of the JWT in file.
func tokenTimes(file string) (exp, iat time.Time, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return exp, iat, err
	}
	iat, exp, err = jwtclaims.Times(string(b))
	return exp, iat, err
}

// WriteTokenKubeconfig writes a kubeconfig that reaches the API server of
// admin (server and CA) and authenticates with the token in tokenFile only:
// no client certificate, so its user, ServiceAccount serviceAccount, has
// that account's rights and no more; namespace is its default.
func WriteTokenKubeconfig(path string, admin *rest.Config, tokenFile, serviceAccount, namespace string) error {
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		b, err := os.ReadFile(admin.CAFile)
		if err != nil {
			return fmt.Errorf("read cluster CA: %w", err)
		}
		ca = b
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["oplab"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: admin.Insecure}
	cfg.AuthInfos[serviceAccount] = &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	cfg.Contexts[serviceAccount] = &clientcmdapi.Context{Cluster: "oplab", AuthInfo: serviceAccount, Namespace: namespace}
	cfg.CurrentContext = serviceAccount
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write the kubeconfig of %s: %w", serviceAccount, err)
	}
	return os.Chmod(path, 0o600)
}
