package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// DockerPKI is the CA of the hosts' Docker engines and registry, apart
// from Consul's and Nomad's so that no agent certificate opens a Docker
// API: every engine listens on TCP with TLS and wants a client
// certificate of this CA (the harness's), and the registry on the client
// host likewise wants the engines'. Docker has no `tls` command of its
// own, so the certificates are made here with Go's crypto/x509.
type DockerPKI struct{ Dir string }

func (p DockerPKI) CA() string              { return filepath.Join(p.Dir, "ca.pem") }
func (p DockerPKI) caKey() string           { return filepath.Join(p.Dir, "ca-key.pem") }
func (p DockerPKI) Cert(name string) string { return filepath.Join(p.Dir, name+".pem") }
func (p DockerPKI) Key(name string) string  { return filepath.Join(p.Dir, name+"-key.pem") }

// CertPath is DOCKER_CERT_PATH for the harness: ca.pem, cert.pem and
// key.pem, the names the Docker client looks for.
func (p DockerPKI) CertPath() string { return filepath.Join(p.Dir, "harness") }

const dockerCertDays = 825

func (p DockerPKI) ensure(inv *Inventory) error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return err
	}
	ca, caKey, err := p.loadCA()
	if errors.Is(err, os.ErrNotExist) {
		ca, caKey, err = p.makeCA(inv)
	}
	if err != nil {
		return err
	}
	for _, h := range inv.Hosts {
		if _, err := os.Stat(p.Cert(h.Name)); err == nil {
			continue
		}
		tmpl := leaf(h.Name)
		// a server for its engine and the registry, a client of the
		// registry (the engine presents it when it pulls)
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.DNSNames = []string{h.Name, "localhost"}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		if ip := net.ParseIP(h.Address); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h.Address)
		}
		if err := writeLeaf(tmpl, ca, caKey, p.Cert(h.Name), p.Key(h.Name)); err != nil {
			return fmt.Errorf("docker certificate for %s: %w", h.Name, err)
		}
	}
	dir := p.CertPath()
	if _, err := os.Stat(filepath.Join(dir, "cert.pem")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmpl := leaf("orchbench-harness")
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if err := writeLeaf(tmpl, ca, caKey, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")); err != nil {
		return err
	}
	b, err := os.ReadFile(p.CA())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "ca.pem"), b, 0o600)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func leaf(cn string) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"orchbench remote"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(0, 0, dockerCertDays),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
}

func (p DockerPKI) makeCA(inv *Inventory) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "orchbench docker CA " + inv.Datacenter, Organization: []string{"orchbench remote"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(5, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(p.caKey(), "EC PRIVATE KEY", mustMarshalEC(key)); err != nil {
		return nil, nil, err
	}
	if err := writePEM(p.CA(), "CERTIFICATE", der); err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

func (p DockerPKI) loadCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, err := os.ReadFile(p.CA())
	if err != nil {
		return nil, nil, err
	}
	kb, err := os.ReadFile(p.caKey())
	if err != nil {
		return nil, nil, err
	}
	cblk, _ := pem.Decode(cb)
	kblk, _ := pem.Decode(kb)
	if cblk == nil || kblk == nil {
		return nil, nil, fmt.Errorf("%s: not PEM", p.Dir)
	}
	ca, err := x509.ParseCertificate(cblk.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kblk.Bytes)
	return ca, key, err
}

func writeLeaf(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(keyPath, "EC PRIVATE KEY", mustMarshalEC(key)); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der)
}

func mustMarshalEC(k *ecdsa.PrivateKey) []byte {
	b, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // only for curves Go does not know
	}
	return b
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// httpClient speaks TLS to the cluster's engines and registry as the
// harness: their CA trusted, its client certificate shown.
func (p DockerPKI) httpClient() (*http.Client, error) {
	dir := p.CertPath()
	tr, err := mutualTLS(filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}, nil
}
