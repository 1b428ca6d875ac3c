// This file is added to k8s.io/apiserver/pkg/server/options in the copy of
// that module kube-controlplane is built against (hack/build-controlplane.sh),
// and the API server's loopback certificate is made by
// generateLoopbackCertKey instead of
// certutil.GenerateSelfSignedCertKeyWithOptions.
//
// Upstream makes that certificate, and the CA that signs it, with 2048-bit
// RSA keys at every start: two key generations of 25-300 ms each (median
// about 100 ms on a 2-core machine) on the path to serving, and the largest
// source of variance in a cluster's start-up. The certificate lives only in
// the process's memory, for the API server's connections to itself; ECDSA
// P-256 keys take well under a millisecond and serve TLS the same way.
// Everything else is as upstream: a CA and a serving certificate for the
// host, valid an hour before now and for opts.MaxAge (one year when zero),
// returned as the certificate followed by the CA and the key, PEM-encoded.

package options

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

func generateLoopbackCertKey(opts certutil.SelfSignedCertKeyOptions) (certPEM, keyPEM []byte, err error) {
	maxAge := opts.MaxAge
	if maxAge == 0 {
		maxAge = 365 * 24 * time.Hour
	}
	validFrom := time.Now().Add(-time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	caTemplate := x509.Certificate{
		SerialNumber:          loopbackSerial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", opts.Host, time.Now().Unix())},
		NotBefore:             validFrom,
		NotAfter:              validFrom.Add(maxAge),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, &caTemplate, &caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template := x509.Certificate{
		SerialNumber:          loopbackSerial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", opts.Host, time.Now().Unix())},
		NotBefore:             validFrom,
		NotAfter:              validFrom.Add(maxAge),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IPAddresses:           opts.AlternateIPs,
		DNSNames:              opts.AlternateDNS,
	}
	if ip := net.ParseIP(opts.Host); ip != nil {
		template.IPAddresses = append([]net.IP{ip}, template.IPAddresses...)
	} else {
		template.DNSNames = append([]string{opts.Host}, template.DNSNames...)
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return certPEM, keyPEM, nil
}

// loopbackSerial is a uniform random serial number in [1, MaxInt64).
func loopbackSerial() *big.Int {
	n, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64-1))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n.Add(n, big.NewInt(1))
}
