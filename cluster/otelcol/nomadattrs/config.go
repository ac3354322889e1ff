package nomadattrs

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Config is the processor's configuration block in the agent's YAML.
type Config struct {
	// Endpoint is Nomad's HTTP API base URL, e.g. http://127.0.0.1:4646.
	Endpoint string `mapstructure:"endpoint"`
	// Token is sent as X-Nomad-Token when set (clusters with ACLs);
	// TokenFile, when set instead, holds it (a remote cluster's agents
	// read theirs from a root-only file rather than from their job).
	Token     string `mapstructure:"token"`
	TokenFile string `mapstructure:"token_file"`
	// CAFile is the CA an https endpoint's certificate is checked against
	// (a remote cluster's Nomad CA); empty: the system's.
	CAFile string `mapstructure:"ca_file"`
	// Timeout bounds one allocation lookup, so a hung Nomad stalls the
	// pipeline for at most this long per unknown allocation.
	Timeout time.Duration `mapstructure:"timeout"`
	// CacheSize bounds the number of allocations remembered (least recently
	// used are forgotten first); a node runs far fewer allocations than this.
	CacheSize int `mapstructure:"cache_size"`
	// RetryAfter is how long a failed lookup (Nomad down, unknown alloc) is
	// remembered before Nomad is asked again, so a down Nomad is not asked
	// once per batch.
	RetryAfter time.Duration `mapstructure:"retry_after"`
	// PathAttribute is the log record attribute holding the file path (the
	// filelog receiver's include_file_path).
	PathAttribute string `mapstructure:"path_attribute"`
}

func createDefaultConfig() *Config {
	return &Config{
		Endpoint:      "http://127.0.0.1:4646",
		Timeout:       2 * time.Second,
		CacheSize:     1024,
		RetryAfter:    30 * time.Second,
		PathAttribute: "log.file.path",
	}
}

// Validate reports the first configuration field at fault.
func (c *Config) Validate() error {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q is not an http(s) URL with a host", c.Endpoint)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("timeout must be > 0, got %s", c.Timeout)
	}
	if c.CacheSize < 1 {
		return fmt.Errorf("cache_size must be >= 1, got %d", c.CacheSize)
	}
	if c.RetryAfter <= 0 {
		return fmt.Errorf("retry_after must be > 0, got %s", c.RetryAfter)
	}
	if c.Token != "" && c.TokenFile != "" {
		return errors.New("token and token_file: set one")
	}
	if c.PathAttribute == "" {
		return errors.New("path_attribute must not be empty")
	}
	return nil
}
