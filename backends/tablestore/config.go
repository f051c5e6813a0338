package tablestore

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvEndpoint        = "TABLESTORE_ENDPOINT"
	EnvInstance        = "TABLESTORE_INSTANCE"
	EnvAccessKeyID     = "TABLESTORE_ACCESS_KEY_ID"
	EnvAccessKeySecret = "TABLESTORE_ACCESS_KEY_SECRET"
	EnvSecurityToken   = "TABLESTORE_SECURITY_TOKEN" // optional (STS)
)

// Config says how Open connects. Its String, GoString, LogValue and MarshalJSON methods redact the
// credentials.
type Config struct {
	Endpoint        string // e.g. https://myinstance.cn-hangzhou.ots.aliyuncs.com
	Instance        string
	AccessKeyID     string
	AccessKeySecret string
	SecurityToken   string

	// ConnectTimeout and RequestTimeout bound one HTTP request (defaults 15 s and 30 s). The SDK takes no
	// context, so RequestTimeout is also how long one call can outlive a cancelled context.
	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	// SDKRetryTimes and SDKRetryWindow configure the SDK's own retries of whole requests (defaults 10
	// tries within 5 s, the SDK's). A negative SDKRetryTimes turns them off. See the package comment for
	// how they combine with brine's per-row retries.
	SDKRetryTimes  int
	SDKRetryWindow time.Duration

	Options
}

// Options are the driver settings shared by Open and New.
type Options struct {
	// MetaTable is the table that holds TableOptions.Meta of every brine table (default "brine_meta").
	MetaTable string
	// MaxVersions is the number of cell versions tables are created with (default 1: a read returns
	// the newest version either way).
	MaxVersions int
	// MaxTimeDeviation is how far an explicit cell timestamp may be from the server's clock; the
	// service rejects writes beyond it. Zero keeps the service's default (one day).
	MaxTimeDeviation time.Duration
	// RowAttempts bounds the tries of a row that fails inside a batch with a retryable code (default 5).
	RowAttempts int
	// RetryBaseDelay and RetryMaxDelay shape the exponential backoff between those tries
	// (defaults 20 ms and 2 s).
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Concurrency is the number of batch requests one Read or Apply keeps in flight (default 4).
	Concurrency int
	// Schemas declares the primary key of tables that brine did not create, by table name.
	Schemas map[string][]KeyColumn
	// Logger receives retries and anomalies at debug/warn level (default: slog.Default()).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MetaTable == "" {
		o.MetaTable = defaultMetaTable
	}
	if o.MaxVersions <= 0 {
		o.MaxVersions = 1
	}
	if o.RowAttempts <= 0 {
		o.RowAttempts = 5
	}
	if o.RetryBaseDelay <= 0 {
		o.RetryBaseDelay = 20 * time.Millisecond
	}
	if o.RetryMaxDelay <= 0 {
		o.RetryMaxDelay = 2 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ConfigFromEnv reads the TABLESTORE_* variables. It returns an error wrapping ErrNotConfigured when
// TABLESTORE_ENDPOINT is unset, or when it is set and another required variable is not (the error
// names the variables, never their values).
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		Endpoint:        os.Getenv(EnvEndpoint),
		Instance:        os.Getenv(EnvInstance),
		AccessKeyID:     os.Getenv(EnvAccessKeyID),
		AccessKeySecret: os.Getenv(EnvAccessKeySecret),
		SecurityToken:   os.Getenv(EnvSecurityToken),
	}
	if cfg.Endpoint == "" {
		return Config{}, fmt.Errorf("%w: %s is not set", ErrNotConfigured, EnvEndpoint)
	}
	var missing []string
	for _, v := range []struct{ name, val string }{
		{EnvInstance, cfg.Instance}, {EnvAccessKeyID, cfg.AccessKeyID}, {EnvAccessKeySecret, cfg.AccessKeySecret},
	} {
		if v.val == "" {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return Config{}, fmt.Errorf("%w: %s set but %s not", ErrNotConfigured, EnvEndpoint, strings.Join(missing, ", "))
	}
	return cfg, nil
}

func (c Config) validate() error {
	var missing []string
	if c.Endpoint == "" {
		missing = append(missing, "Endpoint")
	}
	if c.Instance == "" {
		missing = append(missing, "Instance")
	}
	if c.AccessKeyID == "" {
		missing = append(missing, "AccessKeyID")
	}
	if c.AccessKeySecret == "" {
		missing = append(missing, "AccessKeySecret")
	}
	if len(missing) > 0 {
		return fmt.Errorf("tablestore: config: %w: %s missing", backends.ErrInvalidArgument, strings.Join(missing, ", "))
	}
	return nil
}

// redact keeps a few leading characters of an identifier, enough to tell keys apart in logs.
func redact(s string, keep int) string {
	switch {
	case s == "":
		return ""
	case len(s) <= keep*2:
		return "***"
	}
	return s[:keep] + "***"
}

// String describes the config with the credentials redacted.
func (c Config) String() string {
	return fmt.Sprintf("tablestore.Config{Endpoint:%q Instance:%q AccessKeyID:%q AccessKeySecret:%q SecurityToken:%q}",
		c.Endpoint, c.Instance, redact(c.AccessKeyID, 4), redact(c.AccessKeySecret, 0), redact(c.SecurityToken, 0))
}

// GoString is String: %#v must not print the secret either.
func (c Config) GoString() string { return c.String() }

// MarshalJSON writes the redacted view, so that dumping a config never leaks the secret.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{
		"endpoint":          c.Endpoint,
		"instance":          c.Instance,
		"access_key_id":     redact(c.AccessKeyID, 4),
		"access_key_secret": redact(c.AccessKeySecret, 0),
		"security_token":    redact(c.SecurityToken, 0),
	})
}

// LogValue lets slog log a Config without its credentials.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("endpoint", c.Endpoint),
		slog.String("instance", c.Instance),
		slog.String("access_key_id", redact(c.AccessKeyID, 4)),
		slog.String("access_key_secret", redact(c.AccessKeySecret, 0)),
		slog.String("security_token", redact(c.SecurityToken, 0)),
	)
}
