package k8stest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"go.etcd.io/etcd/server/v3/embed"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
)

// AdminToken is the bearer token of the administrator (group
// system:masters) of every server Start starts.
const AdminToken = "k8stest-admin-token"

// Server is a running kube-apiserver and its etcd.
type Server struct {
	// URL is the API server's address, https://127.0.0.1:<port>.
	URL string
	// CAFile is the PEM file of the CA that signed the serving certificate.
	CAFile string
	// Dir holds the server's files (certificates, tokens, its log).
	Dir string

	caPEM   []byte
	cmd     *exec.Cmd
	exited  chan struct{}
	etcd    *embed.Etcd
	dialers []*connrotation.Dialer
	users   []user
	t       testing.TB
}

// user is a row of the static token file.
type user struct {
	token, name string
	groups      []string
}

// Option configures Start.
type Option func(*Server)

// WithUser adds a user authenticated by token, member of groups; RBAC
// grants it nothing unless the test binds it a role.
func WithUser(token, name string, groups ...string) Option {
	return func(s *Server) { s.users = append(s.users, user{token: token, name: name, groups: groups}) }
}

// startTimeout bounds how long the server may take to become ready (the
// machine may be busy with other tests).
const startTimeout = 2 * time.Minute

// Start starts a kube-apiserver against a new embedded etcd and waits
// until it is ready; both stop when the test ends. The test is skipped
// when the binary is missing and cannot be built.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		celltest.SkipUnprivileged(t, "k8stest: no kube-apiserver (run `make kube-apiserver`): %v", err)
	}
	s := &Server{t: t, Dir: t.TempDir()}
	for _, o := range opts {
		o(s)
	}
	etcd, etcdURL, err := startEtcd(s.Dir)
	if err != nil {
		t.Fatalf("k8stest: %v", err)
	}
	s.etcd = etcd
	t.Cleanup(s.stop)
	if err := s.writeFiles(); err != nil {
		t.Fatalf("k8stest: %v", err)
	}
	var lastErr error
	for range 3 { // the free port may be taken before the server binds it
		if lastErr = s.startProcess(bin, etcdURL); lastErr == nil {
			return s
		}
		t.Logf("k8stest: %v; retrying", lastErr)
	}
	t.Fatalf("k8stest: %v", lastErr)
	return nil
}

// writeFiles writes the serving certificate, the token file and the
// service-account keys.
func (s *Server) writeFiles() error {
	ca, cert, key, err := servingCert()
	if err != nil {
		return err
	}
	saPriv, saPub, err := serviceAccountKey()
	if err != nil {
		return err
	}
	s.caPEM = ca
	s.CAFile = s.path("ca.crt")
	tokens := fmt.Sprintf("%s,k8stest-admin,k8stest-admin,\"system:masters\"\n", AdminToken)
	for _, u := range s.users {
		row := fmt.Sprintf("%s,%s,%s", u.token, u.name, u.name)
		if len(u.groups) > 0 {
			row += fmt.Sprintf(",%q", strings.Join(u.groups, ","))
		}
		tokens += row + "\n"
	}
	return writeFiles(map[string][]byte{
		s.CAFile: ca, s.path("serving.crt"): cert, s.path("serving.key"): key,
		s.path("sa.key"): saPriv, s.path("sa.pub"): saPub, s.path("tokens.csv"): []byte(tokens),
	})
}

func (s *Server) path(name string) string { return filepath.Join(s.Dir, name) }

// args are the flags of the server listening on port.
func (s *Server) args(etcdURL string, port int) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + s.path("serving.crt"),
		"--tls-private-key-file=" + s.path("serving.key"),
		"--token-auth-file=" + s.path("tokens.csv"),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + s.path("sa.pub"),
		"--service-account-signing-key-file=" + s.path("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		// No controller manager creates the default service accounts.
		"--disable-admission-plugins=ServiceAccount",
		"--cert-dir=" + s.path("certs"),
		"--profiling=false",
		"--v=1",
	}
}

// startProcess starts the server on a free port and waits until it is
// ready.
func (s *Server) startProcess(bin, etcdURL string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(s.path("kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open the server log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, s.args(etcdURL, port)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	exited, err := forkLocked(cmd)
	if err != nil {
		return fmt.Errorf("start kube-apiserver: %w", err)
	}
	s.cmd, s.exited = cmd, exited
	s.URL = "https://127.0.0.1:" + strconv.Itoa(port)
	if err := s.waitReady(); err != nil {
		s.kill()
		return fmt.Errorf("%w; log:\n%s", err, s.logTail(40))
	}
	return nil
}

// forkLocked starts cmd, killed when the test binary dies; exited is
// closed when it has exited.
func forkLocked(cmd *exec.Cmd) (exited chan struct{}, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited, started := make(chan struct{}), make(chan error)
	go func() {
		// Pdeathsig fires when the thread that forked the server exits,
		// not the process, and a test that enters a network namespace
		// ends its locked thread: fork from a thread kept until the
		// server exits.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

// waitReady polls /readyz until it answers ok.
func (s *Server) waitReady() error {
	cs := s.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var lastErr error
	for {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		lastErr = err
		select {
		case <-s.exited:
			return fmt.Errorf("kube-apiserver exited: %s", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after %s: %w", startTimeout, lastErr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail returns the last n lines of the server's log.
func (s *Server) logTail(n int) string {
	data, _ := os.ReadFile(s.path("kube-apiserver.log"))
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kill stops the server process: SIGTERM, then SIGKILL after 10s.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// stop closes the clients' connections, stops the server and its etcd.
func (s *Server) stop() {
	for _, d := range s.dialers {
		d.CloseAll()
	}
	s.kill()
	if s.etcd != nil {
		s.etcd.Close()
		s.etcd = nil
	}
}

// Config returns a client config authenticating with token. Its
// connections are closed when the test ends.
func (s *Server) Config(token string) *rest.Config {
	d := connrotation.NewDialer((&net.Dialer{Timeout: 10 * time.Second}).DialContext)
	s.dialers = append(s.dialers, d)
	return &rest.Config{
		Host:            s.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.caPEM},
		Dial:            d.DialContext,
		QPS:             -1, // no client-side rate limit in tests
	}
}

// AdminConfig returns the administrator's client config.
func (s *Server) AdminConfig() *rest.Config { return s.Config(AdminToken) }

// Clientset returns an administrator's clientset.
func (s *Server) Clientset() kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(s.AdminConfig())
	if err != nil {
		s.t.Fatalf("k8stest: clientset: %v", err)
	}
	return cs
}

// Dynamic returns an administrator's dynamic client.
func (s *Server) Dynamic() dynamic.Interface {
	dc, err := dynamic.NewForConfig(s.AdminConfig())
	if err != nil {
		s.t.Fatalf("k8stest: dynamic client: %v", err)
	}
	return dc
}

// WriteKubeconfig writes a kubeconfig file for the server that
// authenticates with token and returns its path.
func (s *Server) WriteKubeconfig(token string) string {
	s.t.Helper()
	name := filepath.Join(s.t.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: k8stest
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: k8stest
  user:
    token: %s
contexts:
- name: k8stest
  context: {cluster: k8stest, user: k8stest}
current-context: k8stest
`, s.URL, s.CAFile, token)
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		s.t.Fatalf("k8stest: %v", err)
	}
	return name
}

// ServiceAccountToken creates service account namespace/name if it does
// not exist and returns a token for it (TokenRequest, one hour).
func (s *Server) ServiceAccountToken(namespace, name string) string {
	s.t.Helper()
	ctx := context.Background()
	cs := s.Clientset()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		s.t.Fatalf("k8stest: create service account %s/%s: %v", namespace, name, err)
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("k8stest: token of %s/%s: %v", namespace, name, err)
	}
	return tr.Status.Token
}
