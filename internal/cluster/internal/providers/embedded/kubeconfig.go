package embedded

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for server that authenticates with the
// client certificate certName of the cluster's PKI. Certificates are embedded
// so the file works on its own, wherever it is copied.
func writeKubeconfig(path, clusterName, server string, p *pki, certName string) error {
	ca, err := readFile(p.path(caCertFile))
	if err != nil {
		return err
	}
	crt, err := readFile(p.cert(certName))
	if err != nil {
		return err
	}
	key, err := readFile(p.key(certName))
	if err != nil {
		return err
	}
	ctx := "oplab-" + clusterName
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ctx] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[ctx] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: ctx, AuthInfo: ctx, Namespace: "default"}
	cfg.CurrentContext = ctx
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
