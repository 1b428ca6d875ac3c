package embedded

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"
)

// certValidity is how long the cluster's certificates live. Clusters are
// disposable; a year outlives any lab.
const certValidity = 365 * 24 * time.Hour

// pki is a cluster's certificate authority and the certificates issued from
// it. Every cluster has its own, so a credential of one cluster is worthless
// on another.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
}

// Files of the PKI directory.
const (
	caCertFile   = "ca.crt"
	saKeyFile    = "sa.key"
	saPubFile    = "sa.pub"
	servingName  = "serving"     // API server, etcd and component serving cert
	frontProxy   = "front-proxy" // API server's client cert for aggregated APIs
	etcdClient   = "etcd-client" // API server's client cert for etcd
	adminName    = "admin"       // cluster-admin kubeconfig
	cmName       = "controller-manager"
	schedName    = "scheduler"
	kwokName     = "kwok"
	frontProxyCN = "front-proxy-client"
)

// newPKI generates a CA, a service-account signing key and every certificate
// the control plane needs, and writes them as PEM files under dir.
// ECDSA P-256 keeps generation to milliseconds where RSA would take a second.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "oplab-ca"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA: %w", err)
	}
	caCert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &pki{dir: dir, caCert: caCert, caKey: caKey}
	if err := writePEM(p.path(caCertFile), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	if err := writeKey(p.path("ca.key"), caKey); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(p.path(saKeyFile), saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.path(saPubFile), "PUBLIC KEY", pub); err != nil {
		return nil, err
	}

	certs := []struct {
		name   string
		cn     string
		orgs   []string
		server bool
	}{
		{servingName, "oplab-serving", nil, true},
		{frontProxy, frontProxyCN, nil, false},
		{etcdClient, "kube-apiserver-etcd-client", nil, false},
		{adminName, "oplab-admin", []string{"system:masters"}, false},
		{cmName, "system:kube-controller-manager", nil, false},
		{schedName, "system:kube-scheduler", nil, false},
		// KWOK plays every node's kubelet; it needs to write nodes, leases
		// and pod status of every pod, so it is a cluster admin.
		{kwokName, "kwok-controller", []string{"system:masters"}, false},
	}
	for _, c := range certs {
		if err := p.issue(c.name, c.cn, c.orgs, c.server); err != nil {
			return nil, fmt.Errorf("issue %s certificate: %w", c.name, err)
		}
	}
	return p, nil
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }
func (p *pki) cert(name string) string { return p.path(name + ".crt") }
func (p *pki) key(name string) string  { return p.path(name + ".key") }

// issue signs a certificate for cn. A server certificate is valid for
// 127.0.0.1 and localhost, where every component of the cluster listens, and
// for the in-cluster names of the kubernetes Service.
func (p *pki) issue(name, cn string, orgs []string, server bool) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.ParseIP(serviceIP)}
		tmpl.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.cert(name), "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(p.key(name), key)
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func writeKey(path string, key crypto.Signer) error {
	data, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func readFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}
