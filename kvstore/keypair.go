package kvstore

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
)

// reloadingKeyPair serves a client certificate and re-reads it from disk
// when the files' modification times or sizes change.
type reloadingKeyPair struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string
	lastErr error
}

func fileStamp(paths ...string) (string, error) {
	s := ""
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%s:%d:%d;", p, fi.ModTime().UnixNano(), fi.Size())
	}
	return s, nil
}

func (k *reloadingKeyPair) load() (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	stamp, err := fileStamp(k.certFile, k.keyFile)
	if err == nil && stamp == k.stamp && k.cert != nil {
		return k.cert, nil
	}
	if err == nil {
		var cert tls.Certificate
		cert, err = loadKeyPair(k.certFile, k.keyFile)
		if err == nil {
			k.cert, k.stamp = &cert, stamp
			return k.cert, nil
		}
	}
	k.lastErr = fmt.Errorf("load client certificate %s: %w", k.certFile, err)
	if k.cert != nil {
		// Mid-rotation (one file written, not the other): keep serving
		// the previous pair until both are readable.
		return k.cert, nil
	}
	return nil, k.lastErr
}

// loadKeyPair is tls.LoadX509KeyPair reading through readConfigFile.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := readConfigFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readConfigFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// GetClientCertificate implements tls.Config.GetClientCertificate.
func (k *reloadingKeyPair) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return k.load()
}
