package search

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The environment variables Config reads. Each key can also come from a
// file named by the same variable with _FILE appended (a mounted secret).
const (
	EnvProvider       = "SANDOX_SEARCH_PROVIDER"
	EnvBraveKey       = "SANDOX_SEARCH_BRAVE_API_KEY"
	EnvBraveEndpoint  = "SANDOX_SEARCH_BRAVE_ENDPOINT"
	EnvGoogleKey      = "SANDOX_SEARCH_GOOGLE_API_KEY"
	EnvGoogleCX       = "SANDOX_SEARCH_GOOGLE_CX"
	EnvGoogleEndpoint = "SANDOX_SEARCH_GOOGLE_ENDPOINT"
	EnvSearXNGURL     = "SANDOX_SEARCH_SEARXNG_URL"
	EnvQuotaPerMinute = "SANDOX_SEARCH_QUOTA_PER_MINUTE"
	EnvQuotaBurst     = "SANDOX_SEARCH_QUOTA_BURST"
)

// Config configures the search service.
type Config struct {
	// Default is the provider used when a request names none. Empty means
	// the first configured of brave, google, searxng (brave when none is).
	Default string
	// DefaultCount is the number of results when a request asks for none.
	DefaultCount int
	// MaxCount caps the number of results a request may ask for.
	MaxCount int
	// Timeout bounds one provider call.
	Timeout time.Duration
	// Quota bounds each sandbox's searches, per instance of the service.
	Quota   Quota
	Brave   Brave
	Google  Google
	SearXNG SearXNG
}

// DefaultConfig returns a Config with no provider configured.
func DefaultConfig() Config {
	return Config{
		DefaultCount: 10, MaxCount: 50, Timeout: 20 * time.Second,
		Quota: Quota{PerMinute: 30, Burst: 10},
	}
}

// FromEnv fills a DefaultConfig from getenv; a key given as a file (the
// variable with _FILE appended) is read with readFile. main passes
// os.Getenv and os.ReadFile, so keys are read at run time and never built
// into an image.
func FromEnv(getenv func(string) string, readFile func(string) ([]byte, error)) (Config, error) {
	cfg := DefaultConfig()
	secret := func(key string) (string, error) {
		if v := getenv(key); v != "" {
			return v, nil
		}
		path := getenv(key + "_FILE")
		if path == "" {
			return "", nil
		}
		data, err := readFile(path)
		if err != nil {
			return "", fmt.Errorf("%s_FILE: %w", key, err)
		}
		return strings.TrimSpace(string(data)), nil
	}
	var err error
	if cfg.Brave.APIKey, err = secret(EnvBraveKey); err != nil {
		return cfg, err
	}
	if cfg.Google.APIKey, err = secret(EnvGoogleKey); err != nil {
		return cfg, err
	}
	cfg.Default = getenv(EnvProvider)
	cfg.Brave.Endpoint = getenv(EnvBraveEndpoint)
	cfg.Google.Endpoint = getenv(EnvGoogleEndpoint)
	cfg.Google.EngineID = getenv(EnvGoogleCX)
	cfg.SearXNG.URL = getenv(EnvSearXNGURL)
	if v := getenv(EnvQuotaPerMinute); v != "" {
		if cfg.Quota.PerMinute, err = strconv.ParseFloat(v, 64); err != nil {
			return cfg, fmt.Errorf("%s: want requests a minute (0 for no quota): %w", EnvQuotaPerMinute, err)
		}
	}
	if v := getenv(EnvQuotaBurst); v != "" {
		if cfg.Quota.Burst, err = strconv.Atoi(v); err != nil || cfg.Quota.Burst < 1 {
			return cfg, fmt.Errorf("%s: want a whole number of requests, at least 1, got %q", EnvQuotaBurst, v)
		}
	}
	return cfg, nil
}

// providers returns the configured providers by name, all three always
// present (an unconfigured one answers ErrNotConfigured), and the default.
func (cfg Config) providers() (map[string]Provider, string) {
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	brave, google, searxng := cfg.Brave, cfg.Google, cfg.SearXNG
	brave.Client, google.Client, searxng.Client = client, client, client
	ps := map[string]Provider{"brave": &brave, "google": &google, "searxng": &searxng}
	def := cfg.Default
	if def == "" {
		switch {
		case brave.APIKey != "":
			def = "brave"
		case google.APIKey != "":
			def = "google"
		case searxng.URL != "":
			def = "searxng"
		default:
			def = "brave"
		}
	}
	return ps, def
}
