package localpg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/sharding/shellquote"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Superuser is the bootstrap superuser every cluster is initialized with.
const Superuser = "postgres"

// DefaultDatabase is the database Start creates when Options.Database is empty.
const DefaultDatabase = "cqlpg"

const (
	logName    = "server.log"
	maxLogSize = 64 << 20 // rotate server.log to server.log.1 beyond this
	// readyTimeout bounds waiting for an adopted server, which may still be
	// recovering; startedTimeout applies after pg_ctl start -w has already
	// seen the server ready, when failing connections are not transient.
	readyTimeout   = 60 * time.Second
	startedTimeout = 10 * time.Second
	cleanupTimeout = 30 * time.Second
)

// Options describes one cluster.
type Options struct {
	Dir      string            // data directory, created and initialized if missing
	Port     int               // 0 reuses the port recorded by an earlier start if free, else picks a free one
	Settings map[string]string // extra postgresql.conf settings, e.g. "synchronous_commit": "off"
	Database string            // database created if missing; DefaultDatabase if empty
	Bin      string            // directory of the PostgreSQL binaries; see FindBinaries
	Log      *slog.Logger      // progress messages; discarded if nil
}

// Cluster is a PostgreSQL cluster in a local data directory, started by this
// process or adopted from an earlier one. Its methods are safe for concurrent
// use; Start must not be called twice concurrently on the same directory.
type Cluster struct {
	bins      Binaries
	user      *osUser
	dir       string // absolute
	socketDir string // always short enough for a unix socket path
	logFile   string
	database  string
	settings  map[string]string
	log       *slog.Logger

	// port is atomic so that URL and Port never wait for a Restart.
	port atomic.Int32

	mu     sync.Mutex // serializes lifecycle operations and guards paused
	paused bool
}

// Start initializes the cluster in opts.Dir if needed, starts its server (or
// adopts one still running from an earlier process), and returns once the
// database accepts connections and opts.Database exists. Errors carry the
// tail of the server log.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bins, err := FindBinaries(opts.Bin)
	if err != nil {
		return nil, err
	}
	c, err := newCluster(opts, bins)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	if err := c.start(ctx, opts.Port); err != nil {
		return nil, err
	}
	return c, nil
}

func newCluster(opts Options, bins Binaries) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("localpg: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("localpg: %w", err)
	}
	// pg_ctl pastes the paths into a double-quoted /bin/sh command line.
	if strings.ContainsAny(dir, "\"$`\\\n") {
		return nil, fmt.Errorf("localpg: data directory %q contains a character pg_ctl cannot handle (\", $, `, \\ or newline)", dir)
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("localpg: invalid port %d", opts.Port)
	}
	if err := validateSettings(opts.Settings); err != nil {
		return nil, err
	}
	u, err := serverUser()
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		bins:      bins,
		user:      u,
		dir:       dir,
		socketDir: socketDirFor(dir),
		logFile:   filepath.Join(dir, logName),
		database:  opts.Database,
		settings:  maps.Clone(opts.Settings),
		log:       opts.Log,
	}
	if c.database == "" {
		c.database = DefaultDatabase
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("dir", dir)
	return c, nil
}

// URL returns a keyword/value connection string for pgx or libpq that uses
// the unix socket.
func (c *Cluster) URL() string { return c.dsn(c.socketDir, c.database) }

// TCPURL returns a connection string that uses TCP on 127.0.0.1.
func (c *Cluster) TCPURL() string { return c.dsn("127.0.0.1", c.database) }

// PsqlCommand returns a shell command an operator can paste to open psql on
// the cluster's database.
func (c *Cluster) PsqlCommand() string {
	psql := c.bins.Psql
	if psql == "" {
		psql = "psql"
	}
	return shellquote.Quote(psql) + " " + shellquote.Quote(c.URL())
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return int(c.port.Load()) }

// Dir returns the absolute data directory.
func (c *Cluster) Dir() string { return c.dir }

// Database returns the name of the database URL connects to.
func (c *Cluster) Database() string { return c.database }

// LogFile returns the server log, which pg_ctl appends to across restarts.
func (c *Cluster) LogFile() string { return c.logFile }

func (c *Cluster) dsn(host, db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		dsnQuote(host), c.Port(), Superuser, dsnQuote(db))
}

// prepare makes sure c.dir holds a cluster that c.bins can run, running
// initdb if the directory is missing or empty.
func (c *Cluster) prepare(ctx context.Context) error {
	if err := mkdirAll(filepath.Dir(c.dir)); err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	if err := c.user.checkTraversable(c.dir); err != nil {
		return err
	}
	version, err := os.ReadFile(filepath.Join(c.dir, "PG_VERSION"))
	switch {
	case err == nil:
		return c.checkExisting(strings.TrimSpace(string(version)))
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("localpg: %w", err)
	}
	if err := c.emptyDir(); err != nil {
		return err
	}
	start := time.Now()
	out, err := c.user.command(ctx, c.bins.Initdb, "-D", c.dir, "-U", Superuser,
		"--auth=trust", "-E", "UTF8", "--locale=C").CombinedOutput()
	if err != nil {
		// A killed initdb leaves a partial cluster that would later look
		// initialized; the directory was empty, so clearing it is safe.
		c.clearDir()
		return fmt.Errorf("localpg: initdb %s: %w\n%s", c.dir, err, strings.TrimSpace(string(out)))
	}
	c.log.Info("initialized PostgreSQL cluster", "took", time.Since(start))
	return nil
}

// checkExisting validates a cluster left by an earlier run.
func (c *Cluster) checkExisting(version string) error {
	if version != strconv.Itoa(c.bins.Major) {
		return fmt.Errorf("localpg: data directory %s was created by PostgreSQL %s but the binaries in %s are "+
			"PostgreSQL %d: point $%s at PostgreSQL %s binaries, or upgrade the directory with pg_upgrade",
			c.dir, version, c.bins.Dir, c.bins.Major, EnvBin, version)
	}
	if !c.user.switched() {
		return nil
	}
	// A directory copied or restored by root must go to the server's user.
	if owned, err := c.user.owns(c.dir); err != nil || owned {
		return err
	}
	c.log.Info("giving data directory to the PostgreSQL OS user", "user", c.user.name)
	return c.user.chownTree(c.dir)
}

// emptyDir creates c.dir with mode 0700, or checks that an existing one is
// empty, and hands it to the server's user.
func (c *Cluster) emptyDir() error {
	entries, err := os.ReadDir(c.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(c.dir, 0o700); err != nil {
			return fmt.Errorf("localpg: %w", err)
		}
	case err != nil:
		return fmt.Errorf("localpg: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("localpg: %s is neither empty nor a PostgreSQL data directory (no PG_VERSION); "+
			"refusing to initialize a cluster in it", c.dir)
	}
	if err := c.user.chown(c.dir); err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	return nil
}

// clearDir removes everything inside c.dir but keeps the directory, which
// may be a mount point.
func (c *Cluster) clearDir() {
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(c.dir, e.Name()))
	}
}

// waitReady connects until the server answers, then creates the database.
// Only connection failures are retried: an error from a live server is final.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, c.dsn(c.socketDir, "postgres"))
		if err == nil {
			err = c.ensureDatabase(ctx, conn)
			conn.Close(context.WithoutCancel(ctx))
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server not accepting connections: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) ensureDatabase(ctx context.Context, conn *pgx.Conn) error {
	if c.database == "postgres" {
		return nil
	}
	var exists bool
	err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", c.database).Scan(&exists)
	if err != nil || exists {
		return err
	}
	begin := time.Now()
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{c.database}.Sanitize())
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "42P04" {
		return nil // created concurrently: duplicate_database
	}
	if err == nil {
		c.log.Info("created database", "database", c.database, "took", time.Since(begin))
	}
	return err
}
