package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Conn is an SSH session factory to one host. Commands run as root: through
// sudo -n when the inventory's user is not root, so a host whose sudo asks
// for a password fails the preflight instead of hanging an install.
type Conn struct {
	Host   Host
	client *ssh.Client
}

// knownHosts records each host's key the first time remote up meets it
// and refuses a host whose key changed since (a machine replaced, or a
// man in the middle): the harness is about to hand that host its secrets.
type knownHosts struct {
	path string
	mu   sync.Mutex
}

func (k *knownHosts) callback(hostname string, remote net.Addr, key ssh.PublicKey) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := os.Stat(k.path); err == nil {
		check, err := knownhosts.New(k.path)
		if err != nil {
			return fmt.Errorf("%s: %w", k.path, err)
		}
		err = check(hostname, remote, key)
		var kerr *knownhosts.KeyError
		if err == nil {
			return nil
		}
		if !errors.As(err, &kerr) || len(kerr.Want) > 0 {
			return fmt.Errorf("the host key changed since it was first recorded in %s (a reinstalled machine? remove its line there): %w", k.path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(k.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(k.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key))
	return err
}

// Dial connects to h with its key, within timeout.
func Dial(ctx context.Context, h Host, hosts *knownHosts, timeout time.Duration) (*Conn, error) {
	pem, err := os.ReadFile(h.Key)
	if err != nil {
		return nil, fmt.Errorf("reading the SSH key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("the SSH key %s has a passphrase: give remote up a key without one (or a copy decrypted for the run)", h.Key)
		}
		return nil, fmt.Errorf("the SSH key %s: %w", h.Key, err)
	}
	cfg := &ssh.ClientConfig{
		User:            h.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hosts.callback,
		Timeout:         timeout,
	}
	d := net.Dialer{Timeout: timeout}
	raw, err := d.DialContext(ctx, "tcp", h.SSHAddr())
	if err != nil {
		return nil, fmt.Errorf("cannot reach %s: %w", h.SSHAddr(), err)
	}
	_ = raw.SetDeadline(time.Now().Add(timeout))
	c, chans, reqs, err := ssh.NewClientConn(raw, h.SSHAddr(), cfg)
	if err != nil {
		raw.Close()
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, fmt.Errorf("user %s was refused with key %s (is its public key in the host's ~%s/.ssh/authorized_keys?): %w", h.User, h.Key, h.User, err)
		}
		return nil, fmt.Errorf("SSH handshake: %w", err)
	}
	_ = raw.SetDeadline(time.Time{})
	return &Conn{Host: h, client: ssh.NewClient(c, chans, reqs)}, nil
}

// Close ends the connection.
func (c *Conn) Close() error { return c.client.Close() }

// Run runs script with sh as root on the host, stdin fed from in (may be
// nil); it returns stdout, and on failure an error carrying stderr's tail.
func (c *Conn) Run(script string, in io.Reader) (string, error) {
	s, err := c.client.NewSession()
	if err != nil {
		return "", err
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &out, &errb, in
	cmd := "sh -c " + shellQuote(script)
	if c.Host.User != "root" {
		cmd = "sudo -n " + cmd
	}
	if err := s.Run(cmd); err != nil {
		tail := strings.TrimSpace(errb.String())
		if len(tail) > 600 {
			tail = "…" + tail[len(tail)-600:]
		}
		return out.String(), fmt.Errorf("%w: %s", err, tail)
	}
	return out.String(), nil
}

// Write puts data at path on the host (root-owned, mode).
func (c *Conn) Write(path string, data []byte, mode os.FileMode) error {
	_, err := c.Run(fmt.Sprintf("umask 077; mkdir -p %s && cat >%s.orchbench-tmp && chmod %o %s.orchbench-tmp && mv %s.orchbench-tmp %s",
		shellQuote(filepath.Dir(path)), shellQuote(path), mode, shellQuote(path), shellQuote(path), shellQuote(path)), bytes.NewReader(data))
	return err
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
