package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/auth"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
)

// printConfig is cqlpg config: given the flags, environment and file
// cqlpg serve would be, it prints the configuration serve would run with,
// as a YAML file that --config reads back, with its secrets redacted.
func printConfig(args []string) int {
	c, err := loadConfig("config", args, os.LookupEnv, os.Stderr)
	if err != nil {
		reportConfigError(err)
		return 2
	}
	out, err := c.marshal()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cqlpg:", err)
		return 1
	}
	os.Stdout.Write(out)
	return 0
}

// config is the configuration of cqlpg serve. Each field is one setting of
// the settings table, which gives its flag, environment variable, key in
// the YAML file and default.
type config struct {
	Listen               string
	HTTP                 string
	Shards               []cluster.ShardConfig
	LocalShards          int
	DataDir              string
	Datacenter           string
	Rack                 string
	NumTokens            int
	BroadcastAddress     string
	WriteTimeout         time.Duration
	CounterWriteTimeout  time.Duration
	CASContentionTimeout time.Duration
	ReadTimeout          time.Duration
	RangeTimeout         time.Duration
	RequestTimeout       time.Duration
	MaxFrameSize         int64
	MaxConnections       int
	MaxRequestsPerConn   int
	MaxRequests          int
	BatchSizeWarn        int64
	BatchSizeFail        int64
	IdleTimeout          time.Duration
	ShardConns           int
	Auth                 bool
	SuperuserPassword    string
	PasswordCost         int
	MetricsAuth          bool
	TLSCert              string
	TLSKey               string
	TLSClientCA          string
	HTTPTLSCert          string
	HTTPTLSKey           string
	LogFormat            string
	LogLevel             string
	SlowQuery            time.Duration
	ShutdownGrace        time.Duration
	Origin               string
	OriginAuth           string
	OriginTLSCA          string
	OriginTLSCert        string
	OriginTLSKey         string
	ReadFrom             string
	DualWriteFailures    string
	AdviseInterval       time.Duration
	AdvisePartitionWarn  int64
	AdvisePartitionLimit int64
}

// setting is one setting of cqlpg serve: the single definition its flag,
// environment variable, file key and printout are made from.
type setting struct {
	// name is the flag's; the environment variable is CQLPG_ and the
	// name in upper case, with _ for -.
	name string
	// key is the setting's path in the YAML file, its sections joined by
	// dots.
	key  string
	def  string
	help string
	// secret settings print as redacted.
	secret bool
	// field points into a config at the setting's value: a *string,
	// *bool, *int, *int64 (a size in bytes), *time.Duration or
	// *[]cluster.ShardConfig.
	field func(*config) any
}

// env is the setting's environment variable.
func (s *setting) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

const (
	envPrefix = "CQLPG_"
	// envConfig names the YAML file when --config is not given.
	envConfig = envPrefix + "CONFIG"
	// redacted stands for a secret in the printed configuration.
	redacted = "REDACTED"
	// shardSep separates the shards of CQLPG_SHARD.
	shardSep = ";"
)

// settings are the settings of cqlpg serve, in the order of its help and
// of the printed configuration. The flags are a stable contract: names and
// defaults do not change.
var settings = []setting{
	{name: "listen", key: "listen", def: "127.0.0.1:9042", help: "CQL listener `address`",
		field: func(c *config) any { return &c.Listen }},
	{name: "http", key: "http", def: "127.0.0.1:9180", help: "HTTP `address` for /readyz, /healthz, /metrics and the web view at /ui; empty serves none",
		field: func(c *config) any { return &c.HTTP }},
	{name: "shard", key: "shards", help: "PostgreSQL `URL` of a shard, repeatable, in ring order, optionally placed as DC:RACK=URL; " +
		"without it cqlpg runs managed local shards. In CQLPG_SHARD, shards are separated by " + shardSep,
		field: func(c *config) any { return &c.Shards }},
	{name: "local-shards", key: "local_shards.count", def: "3", help: "`number` of managed local shards",
		field: func(c *config) any { return &c.LocalShards }},
	{name: "data-dir", key: "local_shards.data_dir", def: "./cqlpg-data", help: "`directory` of the managed local shards",
		field: func(c *config) any { return &c.DataDir }},
	{name: "dc", key: "gateway.datacenter", def: "datacenter1",
		help:  "the gateway's `datacenter`, local to the LOCAL_ consistency levels, and the default of shards",
		field: func(c *config) any { return &c.Datacenter }},
	{name: "rack", key: "gateway.rack", def: "rack1", help: "the gateway's `rack`, and the default of shards",
		field: func(c *config) any { return &c.Rack }},
	{name: "num-tokens", key: "gateway.num_tokens", def: "16", help: "`number` of vnode tokens a shard takes when it joins the ring",
		field: func(c *config) any { return &c.NumTokens }},
	{name: "broadcast-address", key: "gateway.broadcast_address",
		help: "`address` the other gateways list for this one in system.peers " +
			"(default: the listener's, or when it is a wildcard, the one this host reaches its shards from)",
		field: func(c *config) any { return &c.BroadcastAddress }},
	{name: "write-timeout", key: "timeouts.write", def: "2s", help: "`time` replicas have to acknowledge a write",
		field: func(c *config) any { return &c.WriteTimeout }},
	{name: "counter-write-timeout", key: "timeouts.counter_write", def: "5s",
		help:  "`time` replicas have to acknowledge a counter update",
		field: func(c *config) any { return &c.CounterWriteTimeout }},
	{name: "cas-contention-timeout", key: "timeouts.cas_contention", def: "1s",
		help:  "`time` the Paxos rounds of a lightweight transaction may take before its commit",
		field: func(c *config) any { return &c.CASContentionTimeout }},
	{name: "read-timeout", key: "timeouts.read", def: "5s", help: "`time` replicas have to answer a read",
		field: func(c *config) any { return &c.ReadTimeout }},
	{name: "range-timeout", key: "timeouts.range", def: "10s", help: "`time` replicas have to answer a range scan",
		field: func(c *config) any { return &c.RangeTimeout }},
	{name: "request-timeout", key: "timeouts.request", def: "12s", help: "`time` a request may take in all",
		field: func(c *config) any { return &c.RequestTimeout }},
	{name: "max-frame-size", key: "limits.max_frame_size", def: "256MiB",
		help:  "`size` of the largest request frame accepted, in bytes or with a KiB, MiB or GiB suffix",
		field: func(c *config) any { return &c.MaxFrameSize }},
	{name: "max-connections", key: "limits.max_connections", def: "1024",
		help:  "`number` of client connections open at once; one more has its STARTUP answered Overloaded and is closed",
		field: func(c *config) any { return &c.MaxConnections }},
	{name: "max-requests-per-connection", key: "limits.max_requests_per_connection", def: "1024",
		help:  "`number` of requests in flight on one connection; one more is answered Overloaded",
		field: func(c *config) any { return &c.MaxRequestsPerConn }},
	{name: "max-requests", key: "limits.max_requests", def: "16384",
		help:  "`number` of requests in flight on all connections; one more is answered Overloaded",
		field: func(c *config) any { return &c.MaxRequests }},
	{name: "batch-size-warn-threshold", key: "limits.batch_size_warn_threshold", def: "5KiB",
		help:  "`size` of the values of a batch over several partitions past which it gets a warning (Cassandra's batch_size_warn_threshold)",
		field: func(c *config) any { return &c.BatchSizeWarn }},
	{name: "batch-size-fail-threshold", key: "limits.batch_size_fail_threshold", def: "50KiB",
		help:  "`size` of the values of a batch over several partitions past which it is refused (Cassandra's batch_size_fail_threshold)",
		field: func(c *config) any { return &c.BatchSizeFail }},
	{name: "idle-timeout", key: "timeouts.idle", def: "0s",
		help:  "close a connection that has sent no request for this `time` and has none in flight; 0 keeps it open",
		field: func(c *config) any { return &c.IdleTimeout }},
	{name: "shard-connections", key: "limits.shard_connections", def: "4", help: "`number` of data connections to each shard",
		field: func(c *config) any { return &c.ShardConns }},
	{name: "auth", key: "auth.enabled", def: "false",
		help: "make clients log in with a role's password and check each statement's permissions, " +
			"as Cassandra's PasswordAuthenticator and CassandraAuthorizer do",
		field: func(c *config) any { return &c.Auth }},
	{name: "superuser-password", key: "auth.superuser_password", secret: true,
		help: "`password` of the default superuser cassandra, " +
			"created when --auth first runs on shards without roles (default: a random one, logged once)",
		field: func(c *config) any { return &c.SuperuserPassword }},
	{name: "password-cost", key: "auth.password_cost", def: "10",
		help:  "bcrypt's cost (log2 of its rounds) for the passwords roles are given; the gateway hashes them, and only hashes reach the shards",
		field: func(c *config) any { return &c.PasswordCost }},
	{name: "metrics-auth", key: "auth.metrics", def: "false",
		help:  "with --auth, /metrics asks for a role's login as the web view does; off, Prometheus scrapes without credentials",
		field: func(c *config) any { return &c.MetricsAuth }},
	{name: "tls-cert", key: "tls.cert", help: "PEM `file` of the CQL listener's TLS certificate; with it the listener speaks TLS only",
		field: func(c *config) any { return &c.TLSCert }},
	{name: "tls-key", key: "tls.key", help: "PEM `file` of the TLS certificate's private key",
		field: func(c *config) any { return &c.TLSKey }},
	{name: "tls-client-ca", key: "tls.client_ca", help: "PEM `file` of the authorities client certificates must chain to; " +
		"with it every client must present one",
		field: func(c *config) any { return &c.TLSClientCA }},
	{name: "http-tls-cert", key: "tls.http_cert", help: "PEM `file` of the HTTP listener's TLS certificate; with it the listener speaks HTTPS only",
		field: func(c *config) any { return &c.HTTPTLSCert }},
	{name: "http-tls-key", key: "tls.http_key", help: "PEM `file` of the HTTP certificate's private key",
		field: func(c *config) any { return &c.HTTPTLSKey }},
	{name: "origin", key: "origin.address",
		help:  "`HOST:PORT` of a node of a live cluster being migrated onto cqlpg: every write goes to it and to the shards (dual writes)",
		field: func(c *config) any { return &c.Origin }},
	{name: "origin-auth", key: "origin.auth", secret: true, help: "`USER:PASSWORD` the gateway logs in to the origin with",
		field: func(c *config) any { return &c.OriginAuth }},
	{name: "origin-tls-ca", key: "origin.tls_ca",
		help:  "PEM `file` of the authorities the origin's certificate must chain to; with it the link to the origin speaks TLS",
		field: func(c *config) any { return &c.OriginTLSCA }},
	{name: "origin-tls-cert", key: "origin.tls_cert", help: "PEM `file` of a client certificate for an origin that requires one",
		field: func(c *config) any { return &c.OriginTLSCert }},
	{name: "origin-tls-key", key: "origin.tls_key", help: "PEM `file` of the origin client certificate's private key",
		field: func(c *config) any { return &c.OriginTLSKey }},
	{name: "read-from", key: "origin.read_from", def: "origin",
		help: "with --origin, the `side` reads go to and clients' answers come from: origin, target (the shards), " +
			"or both (answers from the origin, and the shards read too, to count the answers that differ)",
		field: func(c *config) any { return &c.ReadFrom }},
	{name: "dual-write-failures", key: "origin.write_failures", def: "log",
		help:  "with --origin, a write only the side not read from fails is counted and logged (log), or answered to the client (fail)",
		field: func(c *config) any { return &c.DualWriteFailures }},
	{name: "advise-interval", key: "advise.interval", def: "10m",
		help:  "how often the gateway runs the advisor over every table for its metrics (cqlpg_advisor_findings); 0 never",
		field: func(c *config) any { return &c.AdviseInterval }},
	{name: "advise-partition-warn", key: "advise.partition_warn", def: "10MiB",
		help:  "partition `size` past which the advisor warns",
		field: func(c *config) any { return &c.AdvisePartitionWarn }},
	{name: "advise-partition-limit", key: "advise.partition_limit", def: "100MiB",
		help:  "partition `size` past which the advisor reports a problem",
		field: func(c *config) any { return &c.AdvisePartitionLimit }},
	{name: "log-format", key: "log.format", def: "text", help: "log `format`: text or json",
		field: func(c *config) any { return &c.LogFormat }},
	{name: "log-level", key: "log.level", def: "info", help: "log `level`: debug, info, warn or error",
		field: func(c *config) any { return &c.LogLevel }},
	{name: "slow-query", key: "log.slow_query", def: "0s",
		help:  "log each request that takes longer than this `time`, at warning level; 0 logs none",
		field: func(c *config) any { return &c.SlowQuery }},
	{name: "shutdown-grace", key: "shutdown_grace", def: "30s",
		help:  "`time` requests in flight have to finish after SIGINT or SIGTERM before connections are closed",
		field: func(c *config) any { return &c.ShutdownGrace }},
}

// settingByName and settingByKey index the settings by flag name and by
// file key; sections holds the file's keys that are sections of others.
var (
	settingByName = map[string]*setting{}
	settingByKey  = map[string]*setting{}
	sections      = map[string]bool{}
)

func init() {
	for i := range settings {
		s := &settings[i]
		settingByName[s.name] = s
		settingByKey[s.key] = s
		for k := s.key; strings.Contains(k, "."); {
			k = k[:strings.LastIndex(k, ".")]
			sections[k] = true
		}
	}
}

// defaults is the configuration no flag, variable or file has changed.
func defaults() config {
	var c config
	for _, s := range settings {
		if err := parseValue(s.field(&c), s.def); err != nil {
			panic(fmt.Sprintf("default of --%s: %v", s.name, err))
		}
	}
	return c
}

// parseValue sets the setting p points to from its text.
func parseValue(p any, text string) error {
	switch p := p.(type) {
	case *string:
		*p = text
	case *bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(text)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", text)
		}
		*p = n
	case *int64:
		n, err := parseSize(text)
		if err != nil {
			return err
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(text)
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 500ms, 5s or 1m30s", text)
		}
		*p = d
	case *[]cluster.ShardConfig:
		*p = nil
		for spec := range strings.SplitSeq(text, shardSep) {
			if spec = strings.TrimSpace(spec); spec != "" {
				*p = append(*p, parseShard(spec))
			}
		}
	default:
		panic(fmt.Sprintf("setting of type %T", p))
	}
	return nil
}

// formatValue is the text of the setting p points to, which parseValue
// reads back (shards aside: the file lists them).
func formatValue(p any) string {
	switch p := p.(type) {
	case *string:
		return *p
	case *bool:
		return strconv.FormatBool(*p)
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return formatSize(*p)
	case *time.Duration:
		return p.String()
	case *[]cluster.ShardConfig:
		specs := make([]string, len(*p))
		for i, s := range *p {
			specs[i] = s.URL
			if s.Datacenter != "" || s.Rack != "" {
				specs[i] = s.Datacenter + ":" + s.Rack + "=" + s.URL
			}
		}
		return strings.Join(specs, shardSep)
	}
	panic(fmt.Sprintf("setting of type %T", p))
}

var sizeUnits = []struct {
	suffix string
	n      int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// parseSize reads a size in bytes, optionally with a binary suffix.
func parseSize(text string) (int64, error) {
	num, unit := text, int64(1)
	for _, u := range sizeUnits {
		if s, ok := strings.CutSuffix(text, u.suffix); ok {
			num, unit = strings.TrimSpace(s), u.n
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > (1<<62)/unit {
		return 0, fmt.Errorf("%q is not a size such as 1048576, 512KiB or 256MiB", text)
	}
	return n * unit, nil
}

func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n != 0 && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// flagValue is the flag of a setting.
type flagValue struct{ p any }

func (v *flagValue) String() string {
	// The flag package calls String on a zero flagValue, and shows a
	// default only when it differs from the zero value's.
	if v == nil || v.p == nil || reflect.ValueOf(v.p).Elem().IsZero() {
		return ""
	}
	return formatValue(v.p)
}

// Set reads one use of the flag; --shard adds a shard at each use.
func (v *flagValue) Set(text string) error {
	if shards, ok := v.p.(*[]cluster.ShardConfig); ok {
		*shards = append(*shards, parseShard(text))
		return nil
	}
	return parseValue(v.p, text)
}

func (v *flagValue) IsBoolFlag() bool { _, ok := v.p.(*bool); return ok }

// reportedError is a command-line error the flag package has already
// printed, with the usage.
type reportedError struct{ error }

func (e reportedError) Unwrap() error { return e.error }

// origins tells, for each setting given, where: the flag, the environment
// variable, or the file key and line. Errors name settings by it.
type origins map[string]string

func (o origins) of(name string) string {
	if where, ok := o[name]; ok {
		return where
	}
	return "--" + name
}

// loadConfig is the configuration of the command cmd (serve or config):
// the flags in args, over the environment read by getenv, over the YAML
// file --config or CQLPG_CONFIG names, over the defaults. The flag package
// writes its errors and the usage to stderr.
func loadConfig(cmd string, args []string, getenv func(string) (string, bool), stderr io.Writer) (config, error) {
	// Flags parse into their own copy of the defaults, which shows the
	// defaults in the usage; only the flags given are copied over.
	flagged := defaults()
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "YAML `file` of settings, under the keys shown below (env "+envConfig+")")
	for i := range settings {
		s := &settings[i]
		fs.Var(&flagValue{p: s.field(&flagged)}, s.name, s.help+"\n(file: "+s.key+", env: "+s.env()+")")
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: cqlpg %s [--config FILE] [flags]\n\n"+
			"Every setting is a flag, an environment variable and a key of the YAML file;\n"+
			"a flag wins over the environment, the environment over the file.\n\n", cmd)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, reportedError{err}
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	c, from := defaults(), origins{}
	if *file == "" {
		*file, _ = getenv(envConfig)
	}
	if *file != "" {
		if err := c.loadFile(*file, from); err != nil {
			return config{}, err
		}
	}
	for i := range settings {
		s := &settings[i]
		// An empty variable counts as unset, as an unfilled one in a
		// container's environment is.
		text, _ := getenv(s.env())
		if text == "" {
			continue
		}
		if err := parseValue(s.field(&c), text); err != nil {
			return config{}, fmt.Errorf("%s: %w", s.env(), err)
		}
		from[s.name] = s.env()
	}
	fs.Visit(func(f *flag.Flag) {
		if s := settingByName[f.Name]; s != nil {
			reflect.ValueOf(s.field(&c)).Elem().Set(reflect.ValueOf(s.field(&flagged)).Elem())
			from[s.name] = "--" + s.name
		}
	})
	// Shards take the gateway's place unless given theirs, as the gateway
	// would: the printed configuration shows where each one is.
	for i := range c.Shards {
		if c.Shards[i].Datacenter == "" {
			c.Shards[i].Datacenter = c.Datacenter
		}
		if c.Shards[i].Rack == "" {
			c.Shards[i].Rack = c.Rack
		}
	}
	if err := c.validate(from); err != nil {
		return config{}, err
	}
	return c, nil
}

// validate checks the settings' values and how they go together.
func (c *config) validate(from origins) error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", from.of(name), fmt.Sprintf(format, args...)))
	}
	if c.Listen == "" {
		bad("listen", "the CQL listener needs an address")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log-format", "%q is not a log format: want text or json", c.LogFormat)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad("log-level", "%v", err)
	}
	for _, s := range []struct {
		name string
		n    int64
		min  int64
	}{{"num-tokens", int64(c.NumTokens), 1}, {"shard-connections", int64(c.ShardConns), 1},
		{"max-frame-size", c.MaxFrameSize, 1}, {"max-connections", int64(c.MaxConnections), 1},
		{"max-requests-per-connection", int64(c.MaxRequestsPerConn), 1}, {"max-requests", int64(c.MaxRequests), 1},
		{"batch-size-warn-threshold", c.BatchSizeWarn, 1}, {"batch-size-fail-threshold", c.BatchSizeFail, 1}} {
		if s.n < s.min {
			bad(s.name, "must be at least %d, not %d", s.min, s.n)
		}
	}
	for _, s := range []struct {
		name string
		d    time.Duration
	}{{"write-timeout", c.WriteTimeout}, {"counter-write-timeout", c.CounterWriteTimeout},
		{"cas-contention-timeout", c.CASContentionTimeout},
		{"read-timeout", c.ReadTimeout}, {"range-timeout", c.RangeTimeout}, {"request-timeout", c.RequestTimeout}} {
		if s.d <= 0 {
			bad(s.name, "must be positive, not %v", s.d)
		}
	}
	for _, s := range []struct {
		name string
		d    time.Duration
	}{{"slow-query", c.SlowQuery}, {"shutdown-grace", c.ShutdownGrace}, {"idle-timeout", c.IdleTimeout}, {"advise-interval", c.AdviseInterval}} {
		if s.d < 0 {
			bad(s.name, "must not be negative, not %v", s.d)
		}
	}
	if len(c.Shards) == 0 {
		if c.LocalShards < 1 {
			bad("local-shards", "must be at least 1 when no shard is given, not %d", c.LocalShards)
		}
		if c.DataDir == "" {
			bad("data-dir", "managed local shards need a directory")
		}
	}
	for i, s := range c.Shards {
		if s.URL == "" {
			bad("shard", "shard %d has no URL", i+1)
		} else if r, hasPassword := redactShard(s.URL); hasPassword && r == s.URL {
			bad("shard", "shard %d's password is the placeholder %s of a printed configuration; give the real one", i+1, redacted)
		}
	}
	if c.SuperuserPassword == redacted {
		bad("superuser-password", "%s is the placeholder of a printed configuration; give the real password", redacted)
	}
	if c.PasswordCost < auth.MinPasswordCost || c.PasswordCost > auth.MaxPasswordCost {
		bad("password-cost", "%d is outside %d..%d", c.PasswordCost, auth.MinPasswordCost, auth.MaxPasswordCost)
	}
	if c.SuperuserPassword != "" && !c.Auth {
		bad("superuser-password", "needs authentication on (--auth)")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		if c.TLSCert == "" {
			bad("tls-key", "needs a certificate (--tls-cert)")
		} else {
			bad("tls-cert", "needs its private key (--tls-key)")
		}
	}
	if c.TLSClientCA != "" && c.TLSCert == "" {
		bad("tls-client-ca", "needs a certificate and key (--tls-cert and --tls-key)")
	}
	if (c.HTTPTLSCert == "") != (c.HTTPTLSKey == "") {
		if c.HTTPTLSCert == "" {
			bad("http-tls-key", "needs a certificate (--http-tls-cert)")
		} else {
			bad("http-tls-cert", "needs its private key (--http-tls-key)")
		}
	}
	if c.HTTPTLSCert != "" && c.HTTP == "" {
		bad("http-tls-cert", "needs an HTTP listener (--http)")
	}
	if c.MetricsAuth && !c.Auth {
		bad("metrics-auth", "needs authentication on (--auth): the login is a role's")
	}
	if c.Origin != "" {
		if _, _, err := net.SplitHostPort(c.Origin); err != nil {
			bad("origin", "%q is not HOST:PORT", c.Origin)
		}
	}
	if c.OriginAuth != "" {
		if c.Origin == "" {
			bad("origin-auth", "needs an origin (--origin)")
		} else if c.OriginAuth == redacted {
			bad("origin-auth", "%s is the placeholder of a printed configuration; give the real credentials", redacted)
		} else if user, _, ok := strings.Cut(c.OriginAuth, ":"); !ok || user == "" {
			bad("origin-auth", "the origin's credentials are not USER:PASSWORD")
		}
	}
	switch {
	case c.OriginTLSCA != "" && c.Origin == "":
		bad("origin-tls-ca", "needs an origin (--origin)")
	case (c.OriginTLSCert == "") != (c.OriginTLSKey == ""):
		if c.OriginTLSCert == "" {
			bad("origin-tls-key", "needs a certificate (--origin-tls-cert)")
		} else {
			bad("origin-tls-cert", "needs its private key (--origin-tls-key)")
		}
	case c.OriginTLSCert != "" && c.OriginTLSCA == "":
		bad("origin-tls-cert", "needs the origin's authorities (--origin-tls-ca)")
	}
	if _, err := gateway.ParseReadFrom(c.ReadFrom); err != nil {
		bad("read-from", "%v", err)
	}
	if c.DualWriteFailures != "log" && c.DualWriteFailures != "fail" {
		bad("dual-write-failures", "%q is not log or fail", c.DualWriteFailures)
	}
	return errors.Join(errs...)
}

// gateway is the gateway's configuration, but for its TLS and log, which
// serve makes from files and settings.
func (c *config) gateway() gateway.Config {
	return gateway.Config{
		Listen: c.Listen, HTTP: c.HTTP, MetricsAuth: c.MetricsAuth,
		Shards:     append([]cluster.ShardConfig(nil), c.Shards...),
		Datacenter: c.Datacenter, Rack: c.Rack, NumTokens: c.NumTokens, ShardConns: c.ShardConns,
		RequestTimeout: c.RequestTimeout, WriteTimeout: c.WriteTimeout, CounterWriteTimeout: c.CounterWriteTimeout,
		ReadTimeout: c.ReadTimeout, RangeTimeout: c.RangeTimeout, CASContentionTimeout: c.CASContentionTimeout,
		MaxFrameSize: c.MaxFrameSize, MaxConnections: c.MaxConnections,
		MaxRequestsPerConn: c.MaxRequestsPerConn, MaxRequests: c.MaxRequests, IdleTimeout: c.IdleTimeout,
		BatchSizeWarn: c.BatchSizeWarn, BatchSizeFail: c.BatchSizeFail,
		Sweep:     repair.SweepConfig{Interval: gateway.DefaultSweepInterval},
		Gateways:  cluster.GatewaysConfig{Address: c.BroadcastAddress},
		Auth:      gateway.AuthConfig{Enabled: c.Auth, SuperuserPassword: c.SuperuserPassword, PasswordCost: c.PasswordCost},
		SlowQuery: c.SlowQuery,
		Origin:    c.origin(),
		Advise:    advise.Options{PartitionWarn: c.AdvisePartitionWarn, PartitionLimit: c.AdvisePartitionLimit},
		AdviseInterval: func() time.Duration {
			if c.AdviseInterval == 0 {
				return -1 // never
			}
			return c.AdviseInterval
		}(),
	}
}

// origin is the dual writes' configuration, nil without --origin.
func (c *config) origin() *gateway.OriginConfig {
	if c.Origin == "" {
		return nil
	}
	o := &gateway.OriginConfig{StrictWrites: c.DualWriteFailures == "fail"}
	o.Addr, o.Timeout = c.Origin, 5*time.Second
	o.Username, o.Password, _ = strings.Cut(c.OriginAuth, ":")
	o.TLSCA, o.TLSCert, o.TLSKey = c.OriginTLSCA, c.OriginTLSCert, c.OriginTLSKey
	o.ReadFrom, _ = gateway.ParseReadFrom(c.ReadFrom)
	return o
}
