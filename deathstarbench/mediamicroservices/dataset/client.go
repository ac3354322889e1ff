package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// caller sends the loader's and the verifier's requests to one front end,
// each bounded by its own timeout.
type caller struct {
	client   *http.Client
	frontend string
	timeout  time.Duration
}

// newCaller checks frontend and, when client is nil, makes a client that
// keeps a connection per worker: the default transport keeps two idle per
// host, so 32 workers would open and close connections by the thousand.
func newCaller(frontend string, client *http.Client, workers int, timeout time.Duration) (caller, error) {
	frontend = strings.TrimRight(frontend, "/")
	u, err := url.Parse(frontend)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return caller{}, fmt.Errorf("front end %q is not an http(s) URL", frontend)
	}
	if client == nil {
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConnsPerHost = max(workers, 2)
		client = &http.Client{Transport: transport}
	}
	return caller{client: client, frontend: frontend, timeout: timeout}, nil
}

// answer is one response, or the error that stood in for it.
type answer struct {
	status int
	body   string
	err    error
}

// String shows what was answered: the status and the body's first 200
// bytes, or the error.
func (a answer) String() string {
	if a.err != nil {
		return "no answer: " + a.err.Error()
	}
	body := a.body
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	return fmt.Sprintf("got HTTP %d, body %q", a.status, body)
}

func (c caller) get(ctx context.Context, path string) answer {
	return c.send(ctx, http.MethodGet, path, "", nil)
}

func (c caller) postForm(ctx context.Context, path string, form url.Values) answer {
	return c.send(ctx, http.MethodPost, path, "application/x-www-form-urlencoded", []byte(form.Encode()))
}

func (c caller) postJSON(ctx context.Context, path string, body []byte) answer {
	return c.send(ctx, http.MethodPost, path, "application/json", body)
}

func (c caller) send(ctx context.Context, method, path, contentType string, body []byte) answer {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.frontend+path, reader)
	if err != nil {
		return answer{err: err}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	// A page of the dataset is a few kilobytes; a megabyte is plenty.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{err: fmt.Errorf("HTTP %d, reading the body: %w", resp.StatusCode, err)}
	}
	return answer{status: resp.StatusCode, body: string(data)}
}
