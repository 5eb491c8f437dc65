package localpg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// testRoot holds every cluster of this test binary. It is created with mode
// 0755 because, when the tests run as root, PostgreSQL runs as the postgres
// user and must be able to traverse it.
var testRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "localpg-test-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testRoot = dir
	code := m.Run()
	killLeftovers(dir)
	os.RemoveAll(dir)
	os.Exit(code)
}

// killLeftovers stops servers that a failing test could not clean up, so
// that no postmaster outlives the test binary.
func killLeftovers(root string) {
	pids, _ := filepath.Glob(filepath.Join(root, "*", "*", "postmaster.pid"))
	more, _ := filepath.Glob(filepath.Join(root, "*", "*", "*", "postmaster.pid"))
	for _, p := range append(pids, more...) {
		if pm, ok := livePostmaster(filepath.Dir(p)); ok {
			fmt.Fprintf(os.Stderr, "killing leftover PostgreSQL server in %s\n", filepath.Dir(p))
			signalAll([]int{pm.pid}, syscall.SIGQUIT)
		}
	}
}

// newTestDir returns a fresh directory the postgres user can traverse, so
// that every test, and every repetition under -count, gets its own clusters.
func newTestDir(t *testing.T) string {
	dir, err := os.MkdirTemp(testRoot, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

func testOptions(t *testing.T, name string) Options {
	return Options{Dir: filepath.Join(newTestDir(t), name), Log: testLogger(t)}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startCluster starts a cluster and stops it when the test ends.
func startCluster(t *testing.T, ctx context.Context, opts Options) *Cluster {
	t.Helper()
	begin := time.Now()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start %s: %v (port %d)", filepath.Base(opts.Dir), time.Since(begin), c.Port())
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func connect(t *testing.T, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryString(t *testing.T, ctx context.Context, url, sql string) string {
	t.Helper()
	var s string
	if err := connect(t, ctx, url).QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	// Blanks and a comma exercise the quoting of paths; the comma also moves
	// the socket out of the data directory.
	opts := testOptions(t, "life cycle, 1")
	opts.Settings = map[string]string{"work_mem": "8MB"}
	c := startCluster(t, ctx, opts)

	conn := connect(t, ctx, c.URL())
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k int PRIMARY KEY, v text); INSERT INTO kv VALUES (1, 'one')"); err != nil {
		t.Fatal(err)
	}
	for sql, want := range map[string]string{
		"SHOW work_mem":                   "8MB",
		"SHOW lc_collate":                 "C",
		"SHOW server_encoding":            "UTF8",
		"SHOW TimeZone":                   "UTC",
		"SELECT current_database()::text": DefaultDatabase,
	} {
		if got := queryString(t, ctx, c.TCPURL(), sql); got != want {
			t.Errorf("%s = %q, want %q", sql, got, want)
		}
	}
	conn.Close(ctx)

	// A second Start on a running cluster adopts it.
	adopted := startCluster(t, ctx, opts)
	if adopted.Port() != c.Port() {
		t.Errorf("adopted cluster port %d, want %d", adopted.Port(), c.Port())
	}

	begin := time.Now()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop: %v", time.Since(begin))
	if _, running := livePostmaster(c.Dir()); running {
		t.Fatal("server still running after Stop")
	}

	// The data and the port survive a clean restart.
	c = startCluster(t, ctx, opts)
	if c.Port() != adopted.Port() {
		t.Errorf("port after restart %d, want the recorded %d", c.Port(), adopted.Port())
	}
	checkRow(t, ctx, c)

	// The cluster recovers after a crash, via Start and via Restart.
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	c = startCluster(t, ctx, opts)
	checkRow(t, ctx, c)
	port := c.Port()
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Port() != port {
		t.Errorf("port after Restart %d, want %d", c.Port(), port)
	}
	checkRow(t, ctx, c)
	// PsqlCommand must work when pasted into a shell.
	cmd := c.PsqlCommand() + " -XAtc 'SELECT v FROM kv'"
	if out, err := exec.CommandContext(ctx, "sh", "-c", cmd).CombinedOutput(); err != nil || string(out) != "one\n" {
		t.Errorf("%s: %q, %v", cmd, out, err)
	}

	// When the recorded port is taken, an explicit request for it fails with
	// the server's complaint, and an automatic choice moves elsewhere.
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	explicit := opts
	explicit.Port = port
	if _, err := Start(ctx, explicit); err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("Start on a taken port: got %v, want the server log's complaint", err)
	} else {
		t.Logf("Start on a taken port: %v", err)
	}
	c = startCluster(t, ctx, opts)
	if c.Port() == port {
		t.Errorf("Start kept the taken port %d", port)
	}
	checkRow(t, ctx, c)
}

func checkRow(t *testing.T, ctx context.Context, c *Cluster) {
	t.Helper()
	if got := queryString(t, ctx, c.URL(), "SELECT v FROM kv WHERE k = 1"); got != "one" {
		t.Errorf("kv[1] = %q, want one", got)
	}
}

func TestStartMany(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	opts := Options{Log: testLogger(t)}
	root := filepath.Join(newTestDir(t), "many")
	begin := time.Now()
	clusters, err := StartMany(ctx, root, 3, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		t.Cleanup(func() { c.Stop(context.Background()) })
	}
	t.Logf("StartMany(3) fresh: %v", time.Since(begin))
	ports := map[int]bool{}
	for i, c := range clusters {
		if want := filepath.Join(root, fmt.Sprintf("shard%d", i)); c.Dir() != want {
			t.Errorf("cluster %d in %s, want %s", i, c.Dir(), want)
		}
		ports[c.Port()] = true
		if _, err := connect(t, ctx, c.URL()).Exec(ctx, fmt.Sprintf("CREATE TABLE shard%d ()", i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(ports) != 3 {
		t.Errorf("ports %v are not distinct", ports)
	}
	for _, c := range clusters {
		if err := c.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}

	begin = time.Now()
	clusters, err = StartMany(ctx, root, 3, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("StartMany(3) existing: %v", time.Since(begin))
	for _, c := range clusters {
		t.Cleanup(func() { c.Stop(context.Background()) })
	}
	for i, c := range clusters {
		if !ports[c.Port()] {
			t.Errorf("cluster %d moved to port %d", i, c.Port())
		}
		queryString(t, ctx, c.URL(), fmt.Sprintf("SELECT 'shard%d'::regclass::text", i))
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	c := startCluster(t, ctx, testOptions(t, "pause"))
	conn := connect(t, ctx, c.URL())

	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	for name, do := range map[string]func(context.Context) error{
		"open connection": func(ctx context.Context) error { _, err := conn.Exec(ctx, "SELECT 1"); return err },
		"new connection": func(ctx context.Context) error {
			conn, err := pgx.Connect(ctx, c.URL())
			if err == nil {
				conn.Close(ctx)
			}
			return err
		},
	} {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		err := do(qctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s while paused: got %v, want a deadline error", name, err)
		}
	}

	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if got := queryString(t, qctx, c.URL(), "SELECT 'ok'"); got != "ok" {
		t.Errorf("after Resume got %q", got)
	}

	// Stop must work on a paused server.
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLongDataDir(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	opts := testOptions(t, strings.Repeat("d", 100))
	c := startCluster(t, ctx, opts)
	if socketDirFor(c.Dir()) == c.Dir() {
		t.Fatalf("expected a socket directory outside %s", c.Dir())
	}
	if got := queryString(t, ctx, c.URL(), "SELECT 'ok'"); got != "ok" {
		t.Errorf("got %q", got)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(socketDirFor(c.Dir())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket directory left behind after Stop: %v", err)
	}
}

// TestCancelledStart cancels Start during initdb: the partial cluster must
// not survive to confuse the next Start.
func TestCancelledStart(t *testing.T) {
	t.Parallel()
	opts := testOptions(t, "cancelled")
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if c, err := Start(ctx, opts); err == nil {
		c.Stop(t.Context())
		t.Fatal("Start succeeded within 100ms; cannot test cancellation")
	}
	if entries, _ := os.ReadDir(opts.Dir); len(entries) > 0 {
		t.Errorf("cancelled Start left %d files in %s", len(entries), opts.Dir)
	}
	c := startCluster(t, testContext(t), opts)
	queryString(t, testContext(t), c.URL(), "SELECT 'ok'")
}

func TestUntraversableParent(t *testing.T) {
	locked := filepath.Join(newTestDir(t), "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	u := &osUser{name: "someone", uid: 54321, gids: []int{54321}, cred: &syscall.Credential{}}
	err := u.checkTraversable(filepath.Join(locked, "data", "shard0"))
	if err == nil || !strings.Contains(err.Error(), "chmod o+x "+locked) {
		t.Errorf("got %v, want an error naming %s", err, locked)
	}
	if err := u.checkTraversable(filepath.Join(newTestDir(t), "data")); err != nil {
		t.Errorf("testRoot should be traversable: %v", err)
	}
	if os.Geteuid() == 0 {
		_, err := Start(testContext(t), Options{Dir: filepath.Join(locked, "data")})
		t.Logf("Start under %s: %v", locked, err)
		if err == nil || !strings.Contains(err.Error(), locked) {
			t.Errorf("Start under a root-only directory: got %v", err)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, opts := range []Options{
		{},
		{Dir: filepath.Join(testRoot, `a"b`)},
		{Dir: filepath.Join(testRoot, "unused"), Port: 70000},
		{Dir: filepath.Join(testRoot, "unused"), Settings: map[string]string{"port": "1"}},
	} {
		if _, err := Start(t.Context(), opts); err == nil {
			t.Errorf("Start(%+v) succeeded", opts)
		}
	}
}

func TestFindBinaries(t *testing.T) {
	b, err := FindBinaries("")
	if err != nil {
		t.Fatal(err)
	}
	if b.Major < 10 {
		t.Errorf("PostgreSQL major version %d", b.Major)
	}
	if _, err := FindBinaries(t.TempDir()); err == nil {
		t.Error("FindBinaries on an empty directory succeeded")
	}
	t.Setenv(EnvBin, "/nonexistent")
	if _, err := FindBinaries(""); err == nil || !strings.Contains(err.Error(), EnvBin) {
		t.Errorf("bad $%s: got %v", EnvBin, err)
	}
}

func TestSettings(t *testing.T) {
	for _, bad := range []string{"port", "Listen_Addresses", "a b", "x\ny", ""} {
		if validateSettings(map[string]string{bad: "1"}) == nil {
			t.Errorf("setting %q accepted", bad)
		}
	}
	conf := string(renderConf(5432, "/tmp/x", map[string]string{"search_path": `it's \ here`}))
	if !strings.Contains(conf, `search_path = 'it''s \\ here'`) {
		t.Errorf("bad quoting in:\n%s", conf)
	}
	if got := dsnQuote(`/a b/c'd`); got != `'/a b/c\'d'` {
		t.Errorf("dsnQuote = %s", got)
	}
}
