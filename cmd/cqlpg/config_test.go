package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
)

// env is an environment for loadConfig.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
}

// writeFile writes a configuration file and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cqlpg.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigDefaults checks that the defaults of the flags are those that
// were the stable contract before the other ways of giving them.
func TestConfigDefaults(t *testing.T) {
	got, err := loadConfig("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{
		Listen: "127.0.0.1:9042", HTTP: "127.0.0.1:9180", LocalShards: 3, DataDir: "./cqlpg-data",
		Datacenter: "datacenter1", Rack: "rack1", NumTokens: 16,
		WriteTimeout: 2 * time.Second, CounterWriteTimeout: 5 * time.Second, CASContentionTimeout: time.Second, ReadTimeout: 5 * time.Second,
		RangeTimeout: 10 * time.Second, RequestTimeout: 12 * time.Second,
		MaxFrameSize: 256 << 20, ShardConns: 4, PasswordCost: 10, LogFormat: "text", LogLevel: "info", ShutdownGrace: 30 * time.Second,
		MaxConnections: 1024, MaxRequestsPerConn: 1024, MaxRequests: 16384,
		BatchSizeWarn: 5 << 10, BatchSizeFail: 50 << 10,
		ReadFrom: "origin", DualWriteFailures: "log",
		AdviseInterval: 10 * time.Minute, AdvisePartitionWarn: 10 << 20, AdvisePartitionLimit: 100 << 20,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
}

func TestConfigSources(t *testing.T) {
	const file = `
listen: 0.0.0.0:9042
shards:
  - url: postgres://cqlpg@pg1/cqlpg
    datacenter: east
    rack: r1
  - url: host=pg2 dbname=cqlpg
gateway:
  datacenter: east
  rack: r2
  num_tokens: 8
timeouts:
  read: 3s
  request: 20s
  idle: 10m
limits:
  max_frame_size: 64MiB
  shard_connections: 8
  max_connections: 100
  max_requests_per_connection: 128
  max_requests: 2000
auth:
  enabled: true
log:
  format: json
  slow_query: 250ms
shutdown_grace: 1m
`
	fromFile := func(c *config) {
		c.Listen = "0.0.0.0:9042"
		c.Shards = []cluster.ShardConfig{
			{URL: "postgres://cqlpg@pg1/cqlpg", Datacenter: "east", Rack: "r1"},
			{URL: "host=pg2 dbname=cqlpg", Datacenter: "east", Rack: "r2"},
		}
		c.Datacenter, c.Rack, c.NumTokens = "east", "r2", 8
		c.ReadTimeout, c.RequestTimeout = 3*time.Second, 20*time.Second
		c.MaxFrameSize, c.ShardConns = 64<<20, 8
		c.IdleTimeout, c.MaxConnections, c.MaxRequestsPerConn, c.MaxRequests = 10*time.Minute, 100, 128, 2000
		c.Auth = true
		c.LogFormat, c.SlowQuery = "json", 250*time.Millisecond
		c.ShutdownGrace = time.Minute
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want func(*config)
	}{
		{name: "file only", args: []string{"--config", "FILE"}, want: fromFile},
		{name: "file named by the environment", env: map[string]string{"CQLPG_CONFIG": "FILE"}, want: fromFile},
		{name: "environment over file", args: []string{"--config", "FILE"},
			env: map[string]string{"CQLPG_READ_TIMEOUT": "4s", "CQLPG_LISTEN": "10.0.0.1:9042", "CQLPG_AUTH": "false",
				"CQLPG_LOG_LEVEL": "debug", "CQLPG_MAX_FRAME_SIZE": "1048576", "CQLPG_DATA_DIR": "",
				"CQLPG_MAX_REQUESTS_PER_CONNECTION": "64", "CQLPG_IDLE_TIMEOUT": "0s"},
			want: func(c *config) {
				fromFile(c)
				c.ReadTimeout, c.Listen, c.Auth, c.LogLevel, c.MaxFrameSize = 4*time.Second, "10.0.0.1:9042", false, "debug", 1<<20
				c.MaxRequestsPerConn, c.IdleTimeout = 64, 0
			}},
		{name: "environment's shards replace the file's", args: []string{"--config", "FILE"},
			env: map[string]string{"CQLPG_SHARD": "west:r9=postgres://a/db ; host=b dbname=c", "CQLPG_DC": "west"},
			want: func(c *config) {
				fromFile(c)
				c.Datacenter = "west"
				c.Shards = []cluster.ShardConfig{
					{URL: "postgres://a/db", Datacenter: "west", Rack: "r9"},
					{URL: "host=b dbname=c", Datacenter: "west", Rack: "r2"},
				}
			}},
		{name: "flag over environment",
			args: []string{"--config", "FILE", "--read-timeout", "6s", "--auth=false", "--shard", "postgres://x/db", "--shard", "dc9:r9=postgres://y/db"},
			env:  map[string]string{"CQLPG_READ_TIMEOUT": "4s", "CQLPG_AUTH": "true", "CQLPG_SHARD": "postgres://a/db"},
			want: func(c *config) {
				fromFile(c)
				c.ReadTimeout, c.Auth = 6*time.Second, false
				c.Shards = []cluster.ShardConfig{
					{URL: "postgres://x/db", Datacenter: "east", Rack: "r2"},
					{URL: "postgres://y/db", Datacenter: "dc9", Rack: "r9"},
				}
			}},
		{name: "flag --config over the environment's",
			args: []string{"--config", "FILE"}, env: map[string]string{"CQLPG_CONFIG": "/nonexistent.yaml"}, want: fromFile},
		{name: "HTTPS and the metrics login from the environment", args: []string{"--config", "FILE"},
			env: map[string]string{"CQLPG_HTTP_TLS_CERT": "h.pem", "CQLPG_HTTP_TLS_KEY": "hk.pem", "CQLPG_METRICS_AUTH": "true"},
			want: func(c *config) {
				fromFile(c)
				c.HTTPTLSCert, c.HTTPTLSKey, c.MetricsAuth = "h.pem", "hk.pem", true
			}},
		{name: "flag over default, no file",
			args: []string{"--shutdown-grace", "5s", "--dc", "dc2"},
			want: func(c *config) { c.ShutdownGrace, c.Datacenter = 5*time.Second, "dc2" }},
		{name: "limit flags over environment", args: []string{"--config", "FILE", "--max-connections", "7", "--max-requests", "99",
			"--idle-timeout", "30s"}, env: map[string]string{"CQLPG_MAX_CONNECTIONS": "8", "CQLPG_MAX_REQUESTS": "100"},
			want: func(c *config) {
				fromFile(c)
				c.MaxConnections, c.MaxRequests, c.IdleTimeout = 7, 99, 30*time.Second
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, file)
			args := replaceAll(tc.args, "FILE", path)
			vars := map[string]string{}
			for k, v := range tc.env {
				vars[k] = strings.ReplaceAll(v, "FILE", path)
			}
			got, err := loadConfig("serve", args, env(vars), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			want := defaults()
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func replaceAll(args []string, old, new string) []string {
	var out []string
	for _, a := range args {
		out = append(out, strings.ReplaceAll(a, old, new))
	}
	return out
}

// TestConfigGateway checks that the settings, shards placed in the file
// among them, reach the gateway's configuration.
func TestConfigGateway(t *testing.T) {
	path := writeFile(t, `
shards:
  - {url: "postgres://pg1/db", datacenter: dc1, rack: ra}
  - {url: "postgres://pg2/db", datacenter: dc2, rack: rb}
  - {url: "postgres://pg3/db"}
gateway: {datacenter: dc1, rack: rc, num_tokens: 4, broadcast_address: 10.1.2.3}
timeouts: {write: 1s, counter_write: 2s, read: 3s, range: 4s, request: 5s, idle: 1h}
limits: {max_frame_size: 1KiB, shard_connections: 2, max_connections: 10, max_requests_per_connection: 20, max_requests: 30,
  batch_size_warn_threshold: 1KiB, batch_size_fail_threshold: 2KiB}
auth: {enabled: true, superuser_password: s3cret, metrics: true}
log: {slow_query: 100ms}
advise: {interval: 0s, partition_warn: 1MiB}
`)
	c, err := loadConfig("serve", []string{"--config", path}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := c.gateway()
	want := gateway.Config{
		Listen: "127.0.0.1:9042", HTTP: "127.0.0.1:9180", MetricsAuth: true,
		Shards: []cluster.ShardConfig{
			{URL: "postgres://pg1/db", Datacenter: "dc1", Rack: "ra"},
			{URL: "postgres://pg2/db", Datacenter: "dc2", Rack: "rb"},
			{URL: "postgres://pg3/db", Datacenter: "dc1", Rack: "rc"},
		},
		Datacenter: "dc1", Rack: "rc", NumTokens: 4, ShardConns: 2,
		RequestTimeout: 5 * time.Second, WriteTimeout: time.Second, CounterWriteTimeout: 2 * time.Second, CASContentionTimeout: time.Second,
		ReadTimeout: 3 * time.Second, RangeTimeout: 4 * time.Second, MaxFrameSize: 1024,
		MaxConnections: 10, MaxRequestsPerConn: 20, MaxRequests: 30, IdleTimeout: time.Hour,
		BatchSizeWarn: 1 << 10, BatchSizeFail: 2 << 10,
		Sweep:          repair.SweepConfig{Interval: gateway.DefaultSweepInterval},
		Gateways:       cluster.GatewaysConfig{Address: "10.1.2.3"},
		Auth:           gateway.AuthConfig{Enabled: true, SuperuserPassword: "s3cret", PasswordCost: 10},
		SlowQuery:      100 * time.Millisecond,
		AdviseInterval: -1, // 0s: never
		Advise:         advise.Options{PartitionWarn: 1 << 20, PartitionLimit: 100 << 20},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
}

func TestConfigRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:secret@h:5432/db", "postgres://u:REDACTED@h:5432/db"},
		{"postgresql://u:se:cr@et@h1,h2/db?sslmode=require", "postgresql://u:REDACTED@h1,h2/db?sslmode=require"},
		{"postgres://u:p/w@h/db", "postgres://u:REDACTED@h/db"},
		{"postgres://u@h/db?sslmode=disable&password=secret", "postgres://u@h/db?sslmode=disable&password=REDACTED"},
		{"postgres://h/db?sslpassword=secret#x", "postgres://h/db?sslpassword=REDACTED#x"},
		{"host=h password=secret dbname=db", "host=h password=REDACTED dbname=db"},
		{"password = secret host=h", "password = REDACTED host=h"},
		{`host=h password='se cr\'et' dbname=db`, "host=h password=REDACTED dbname=db"},
		{"host=h sslpassword=secret", "host=h sslpassword=REDACTED"},
		{"options='-c x=a://b' password=secret", "options='-c x=a://b' password=REDACTED"},
	} {
		got, found := redactShard(tc.in)
		if got != tc.want || !found {
			t.Errorf("redactShard(%q) = %q, %v, want %q, true", tc.in, got, found, tc.want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "se cr") {
			t.Errorf("redactShard(%q) = %q: the password shows", tc.in, got)
		}
	}
	// Without a password, nothing changes.
	for _, in := range []string{"postgres://u@h/db", "postgres://h/db?user=a@b", "postgres://h:5432/db?user=a@b&x=y:z@w", "host=h user=u dbname=db", "host=h mypassword_file=x"} {
		if got, found := redactShard(in); got != in || found {
			t.Errorf("redactShard(%q) = %q, %v, want it unchanged", in, got, found)
		}
	}

	// The printed configuration redacts the superuser's password and the
	// shards'.
	c := defaults()
	c.Auth, c.SuperuserPassword = true, "topsecret"
	c.Shards = []cluster.ShardConfig{
		{URL: "postgres://u:topsecret@h/db", Datacenter: "d", Rack: "r"},
		{URL: "host=h password=topsecret", Datacenter: "d", Rack: "r"},
	}
	out, err := c.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "topsecret") || strings.Count(string(out), "REDACTED") != 3 {
		t.Errorf("printed configuration does not redact its three passwords:\n%s", out)
	}
	// A printed configuration's placeholders are not taken for passwords.
	path := writeFile(t, string(out))
	if _, err := loadConfig("serve", []string{"--config", path}, env(nil), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "auth.superuser_password") || !strings.Contains(err.Error(), "shards") {
		t.Errorf("loading redacted passwords: err = %v, want errors naming auth.superuser_password and shards", err)
	}
	// An unset password prints as unset, not as a redacted one.
	unset := defaults()
	if out, _ := unset.marshal(); !strings.Contains(string(out), `superuser_password: ""`) {
		t.Errorf("unset password printed as:\n%s", out)
	}
}

// TestConfigRoundTrip checks that cqlpg config prints what --config reads
// back to the same configuration.
func TestConfigRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--shard", "east:r1=postgres://u@h1:5432/db?sslmode=disable", "--shard", "host=/tmp port=5433 dbname=x",
			"--dc", "east", "--rack", "r2", "--num-tokens", "32", "--broadcast-address", "10.0.0.7",
			"--write-timeout", "1500ms", "--counter-write-timeout", "3s", "--read-timeout", "1m", "--range-timeout", "90s",
			"--request-timeout", "2m", "--max-frame-size", "1000", "--shard-connections", "16",
			"--auth", "--metrics-auth", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca", "ca.pem",
			"--log-format", "json", "--log-level", "warn", "--slow-query", "1s", "--shutdown-grace", "0s",
			"--listen", ":9042", "--http", ""},
		{"--local-shards", "5", "--data-dir", "/srv/cqlpg data", "--broadcast-address", "true", "--rack", "123",
			"--http-tls-cert", "h.pem", "--http-tls-key", "hk.pem"},
	} {
		first, err := loadConfig("config", args, env(nil), io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		printed, err := first.marshal()
		if err != nil {
			t.Fatal(err)
		}
		path := writeFile(t, string(printed))
		second, err := loadConfig("config", []string{"--config", path}, env(nil), io.Discard)
		if err != nil {
			t.Fatalf("%q: reading back\n%s: %v", args, printed, err)
		}
		if !reflect.DeepEqual(first, second) {
			t.Errorf("%q: read back from\n%s\n got %+v\nwant %+v", args, printed, second, first)
		}
		if again, _ := second.marshal(); string(again) != string(printed) {
			t.Errorf("%q: printed again differs:\n%s\nthen\n%s", args, printed, again)
		}
	}
}

// TestConfigPrintedKeys checks that the printout has every setting's key,
// in the file's shape.
func TestConfigPrintedKeys(t *testing.T) {
	c := defaults()
	out, err := c.marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		last := s.key[strings.LastIndex(s.key, ".")+1:]
		if !strings.Contains(string(out), last+":") {
			t.Errorf("printout lacks %s:\n%s", s.key, out)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		args []string
		env  map[string]string
		want []string // in the error
	}{
		{name: "unknown key", file: "listen: a:1\nlisten_address: b:2\n", want: []string{"unknown key listen_address", ":2:"}},
		{name: "unknown key in a section", file: "timeouts:\n  read: 1s\n  reed: 2s\n", want: []string{"unknown key timeouts.reed", ":3:"}},
		{name: "unknown section", file: "metrics:\n  address: x\n", want: []string{"unknown key metrics"}},
		{name: "unknown key of a shard", file: "shards:\n  - url: postgres://h/db\n    dc: east\n",
			want: []string{"unknown key shards[0].dc"}},
		{name: "shard without url", file: "shards:\n  - rack: r1\n", want: []string{"shards[0]", "url"}},
		{name: "shards not a list", file: "shards: postgres://h/db\n", want: []string{"shards", "list"}},
		{name: "section not a mapping", file: "timeouts: 5s\n", want: []string{"timeouts", "mapping"}},
		{name: "setting not a value", file: "timeouts:\n  read: [1s]\n", want: []string{"timeouts.read", "single value"}},
		{name: "key twice", file: "listen: a:1\nlisten: b:2\n", want: []string{"listen", "twice"}},
		{name: "not YAML", file: "listen: [a\n", want: []string{"cqlpg.yaml"}},
		{name: "bad duration in file", file: "timeouts:\n  read: 5 seconds\n", want: []string{"timeouts.read", `"5 seconds" is not a duration`}},
		{name: "bad duration in env", env: map[string]string{"CQLPG_READ_TIMEOUT": "5x"}, want: []string{"CQLPG_READ_TIMEOUT", "not a duration"}},
		{name: "bad duration flag", args: []string{"--read-timeout", "5x"}, want: []string{"-read-timeout", "not a duration"}},
		{name: "bad number", file: "gateway:\n  num_tokens: many\n", want: []string{"gateway.num_tokens", "not a whole number"}},
		{name: "bad bool", env: map[string]string{"CQLPG_AUTH": "maybe"}, want: []string{"CQLPG_AUTH", "not true or false"}},
		{name: "bad size", file: "limits:\n  max_frame_size: 1TB\n", want: []string{"limits.max_frame_size", "not a size"}},
		{name: "zero connections", file: "limits:\n  max_connections: 0\n", want: []string{"limits.max_connections (", "at least 1"}},
		{name: "negative requests per connection", env: map[string]string{"CQLPG_MAX_REQUESTS_PER_CONNECTION": "-1"},
			want: []string{"CQLPG_MAX_REQUESTS_PER_CONNECTION", "at least 1"}},
		{name: "requests not a number", args: []string{"--max-requests", "lots"}, want: []string{"-max-requests", "not a whole number"}},
		{name: "negative idle timeout", file: "timeouts:\n  idle: -1s\n", want: []string{"timeouts.idle", "must not be negative"}},
		{name: "missing file", args: []string{"--config", "/nonexistent/cqlpg.yaml"}, want: []string{"/nonexistent/cqlpg.yaml"}},
		{name: "unexpected argument", args: []string{"extra"}, want: []string{`unexpected argument "extra"`}},
		{name: "zero timeout from file", file: "timeouts:\n  write: 0s\n", want: []string{"timeouts.write (", ":2)", "must be positive"}},
		{name: "negative grace from env", env: map[string]string{"CQLPG_SHUTDOWN_GRACE": "-1s"}, want: []string{"CQLPG_SHUTDOWN_GRACE", "negative"}},
		{name: "bad log format", args: []string{"--log-format", "xml"}, want: []string{"--log-format", "text or json"}},
		{name: "bad log level", file: "log:\n  level: loud\n", want: []string{"log.level", "not a log level"}},
		{name: "no local shards", args: []string{"--local-shards", "0"}, want: []string{"--local-shards", "at least 1"}},
		{name: "no shard connections", args: []string{"--shard-connections", "0"}, want: []string{"--shard-connections"}},
		{name: "password without auth", env: map[string]string{"CQLPG_SUPERUSER_PASSWORD": "x"},
			want: []string{"CQLPG_SUPERUSER_PASSWORD", "--auth"}},
		{name: "client CA without certificate", args: []string{"--tls-client-ca", "ca.pem"}, want: []string{"--tls-client-ca"}},
		{name: "key without certificate", file: "tls:\n  key: k.pem\n", want: []string{"tls.key", "--tls-cert"}},
		{name: "password cost too low", args: []string{"--auth", "--password-cost", "3"}, want: []string{"--password-cost", "outside 4..30"}},
		{name: "origin TLS without an origin", args: []string{"--origin-tls-ca", "ca.pem"}, want: []string{"--origin-tls-ca", "--origin"}},
		{name: "origin certificate without key", args: []string{"--origin", "h:9042", "--origin-tls-ca", "ca.pem", "--origin-tls-cert", "c.pem"},
			want: []string{"--origin-tls-cert", "--origin-tls-key"}},
		{name: "origin certificate without authorities", file: "origin:\n  address: h:9042\n  tls_cert: c.pem\n  tls_key: k.pem\n",
			want: []string{"origin.tls_cert", "--origin-tls-ca"}},
		{name: "HTTP key without certificate", file: "tls:\n  http_key: k.pem\n", want: []string{"tls.http_key", "--http-tls-cert"}},
		{name: "HTTP certificate without key", args: []string{"--http-tls-cert", "c.pem"}, want: []string{"--http-tls-cert", "--http-tls-key"}},
		{name: "HTTP certificate without HTTP listener", args: []string{"--http", "", "--http-tls-cert", "c.pem", "--http-tls-key", "k.pem"},
			want: []string{"--http-tls-cert", "needs an HTTP listener"}},
		{name: "metrics login without auth", env: map[string]string{"CQLPG_METRICS_AUTH": "true"},
			want: []string{"CQLPG_METRICS_AUTH", "--auth"}},
		{name: "every error at once", args: []string{"--num-tokens", "0", "--read-timeout", "0s"},
			want: []string{"--num-tokens", "--read-timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeFile(t, tc.file)}, args...)
			}
			_, err := loadConfig("serve", args, env(tc.env), io.Discard)
			if err == nil {
				t.Fatalf("no error, want one with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestConfigExample checks the example file of the documentation.
func TestConfigExample(t *testing.T) {
	c, err := loadConfig("serve", []string{"--config", "../../docs/cqlpg.example.yaml"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Shards) == 0 {
		t.Error("the example lists no shards")
	}
	for _, s := range c.Shards {
		if s.Datacenter == "" || s.Rack == "" {
			t.Errorf("shard %+v has no place", s)
		}
	}
}

// TestConfigEveryFlag checks that every setting has its flag and that
// the settings' keys and variables are distinct.
func TestConfigEveryFlag(t *testing.T) {
	keys, envs := map[string]bool{}, map[string]bool{}
	for _, s := range settings {
		if keys[s.key] || envs[s.env()] {
			t.Errorf("--%s: key %s or variable %s used twice", s.name, s.key, s.env())
		}
		keys[s.key], envs[s.env()] = true, true
		if sections[s.key] {
			t.Errorf("--%s: key %s is also a section", s.name, s.key)
		}
	}
	var help strings.Builder
	loadConfig("serve", []string{"-h"}, env(nil), &help)
	for _, s := range settings {
		if !strings.Contains(help.String(), "-"+s.name+" ") && !strings.Contains(help.String(), "-"+s.name+"\n") {
			t.Errorf("help lacks --%s", s.name)
		}
		if !strings.Contains(help.String(), s.env()) {
			t.Errorf("help lacks %s", s.env())
		}
	}
}

// TestTimeLeft checks the estimate copy and diff print with their
// progress: the ranges left at the pace of those done this run.
func TestTimeLeft(t *testing.T) {
	for _, c := range []struct {
		elapsed    time.Duration
		done, left int
		want       string
	}{
		{10 * time.Second, 0, 32, ""},
		{10 * time.Second, 8, 24, ", about 30s left"},
		{90 * time.Second, 60, 40, ", about 1m0s left"},
		{10 * time.Second, 32, 0, ""},
	} {
		if got := timeLeft(c.elapsed, c.done, c.left); got != c.want {
			t.Errorf("timeLeft(%v, %d, %d) = %q, want %q", c.elapsed, c.done, c.left, got, c.want)
		}
	}
}
