package main_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// buildCqlpg builds the command into a temporary directory.
func buildCqlpg(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cqlpg")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runCqlpg runs the command built by buildCqlpg with args, and returns
// what it printed and its exit status.
func runCqlpg(bin string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(bin, args...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), exitCode(err)
}

// serveProcess is a running `cqlpg serve`.
type serveProcess struct {
	cmd      *exec.Cmd
	cqlPort  int
	httpPort int
	output   serveOutput
	done     chan error
}

// serveOutput is what a serve process printed, written by the goroutine
// reading its output while the test reads it.
type serveOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *serveOutput) WriteString(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b.WriteString(s)
}

func (o *serveOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// listening matches the log lines in which the gateway names the
// addresses it listens on, in either log format.
var listening = regexp.MustCompile(`"(serving HTTP|accepting CQL clients)".*?addr[":=]+127\.0\.0\.1:(\d+)`)

// ports reads the gateway's CQL and HTTP ports from its log, 0 until it
// has named them.
func (p *serveProcess) ports() (cql, http int) {
	for _, m := range listening.FindAllStringSubmatch(p.output.String(), -1) {
		port, _ := strconv.Atoi(m[2])
		if m[1] == "serving HTTP" {
			http = port
		} else {
			cql = port
		}
	}
	return cql, http
}

func startServe(t *testing.T, bin, dataDir string) *serveProcess {
	t.Helper()
	return startServeWith(t, bin, "--data-dir", dataDir, "--local-shards", "3")
}

// startServeWith starts `cqlpg serve` with args besides its listeners',
// and waits until it is ready. The listeners take ports the system
// chooses, which the gateway logs: a port found free and handed over
// could be taken by one of the PostgreSQL servers starting first.
func startServeWith(t testing.TB, bin string, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"}, args...)...)
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.output.WriteString(sc.Text() + "\n")
		}
	}()
	go func() { p.done <- p.cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	})
	// With --http-tls-cert the listener speaks HTTPS only; readiness is
	// all that is asked of it here, whatever its certificate.
	scheme, probe := "http", http.DefaultClient
	if slices.Contains(args, "--http-tls-cert") {
		scheme = "https"
		probe = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		if p.cqlPort, p.httpPort = p.ports(); p.cqlPort != 0 && p.httpPort != 0 {
			resp, err := probe.Get(scheme + "://127.0.0.1:" + strconv.Itoa(p.httpPort) + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return p
				}
			}
		}
		select {
		case err := <-p.done:
			t.Fatalf("cqlpg serve exited: %v\n%s", err, p.output.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("cqlpg serve never became ready\n%s", p.output.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProcess) stop(t testing.TB) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("cqlpg serve exited with %v\n%s", err, p.output.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("cqlpg serve did not stop on SIGTERM\n%s", p.output.String())
	}
}

func (p *serveProcess) session(t *testing.T) *gocql.Session {
	t.Helper()
	cfg := gocql.NewCluster("127.0.0.1")
	cfg.Port = p.cqlPort
	cfg.Timeout = 10 * time.Second
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.output.String())
	}
	return sess
}

// TestServeManagedShards runs the README's command: `cqlpg serve` creates
// three local PostgreSQL clusters, prints a psql command for each, serves
// CQL, stops them on SIGTERM, and finds them, data included, on restart.
func TestServeManagedShards(t *testing.T) {
	bin := buildCqlpg(t)
	dataDir, err := os.MkdirTemp("", "cqlpg-serve-test-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dataDir, 0o755)
	defer os.RemoveAll(dataDir)

	first := startServe(t, bin, dataDir)
	sess := first.session(t)
	for _, q := range []string{
		"CREATE KEYSPACE served WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE served.t (k int PRIMARY KEY, v text)",
		"INSERT INTO served.t (k, v) VALUES (1, 'kept')",
	} {
		if err := sess.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sess.Close()
	first.stop(t)
	out := first.output.String()
	for i := range 3 {
		if !strings.Contains(out, "shard"+strconv.Itoa(i)+": ") || !strings.Contains(out, "psql \"host=") {
			t.Fatalf("no psql command printed for shard%d:\n%s", i, out)
		}
	}
	for i := range 3 {
		pid := filepath.Join(dataDir, "shard"+strconv.Itoa(i), "postmaster.pid")
		if _, err := os.Stat(pid); err == nil {
			t.Errorf("shard%d still running after the gateway stopped", i)
		}
	}

	second := startServe(t, bin, dataDir)
	if strings.Contains(second.output.String(), "initialized PostgreSQL cluster") {
		t.Error("the restart initialized new clusters instead of reusing them")
	}
	sess = second.session(t)
	var v string
	if err := sess.Query("SELECT v FROM served.t WHERE k = 1").WithContext(context.Background()).Scan(&v); err != nil || v != "kept" {
		t.Fatalf("after restart: %q %v", v, err)
	}
	sess.Close()
	second.stop(t)

	// Fewer local shards than the cluster has would drop some: refused.
	_, stderr, code := runCqlpg(bin, "serve", "--data-dir", dataDir, "--local-shards", "2", "--listen", "127.0.0.1:0", "--http", "")
	if code != 1 || !strings.Contains(stderr, "the cluster has 3 shards") || !strings.Contains(stderr, "cqlpg shard decommission") {
		t.Errorf("serve with --local-shards 2 on three: exit %d, %s", code, stderr)
	}

	// More local shards than the cluster has: the new one joins while the
	// gateway serves, and the data stays readable on the grown ring.
	third := startServeWith(t, bin, "--data-dir", dataDir, "--local-shards", "4")
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(third.output.String(), "shard3 is a normal member at ring version 4") {
		if time.Now().After(deadline) {
			t.Fatalf("the fourth local shard did not join:\n%s", third.output.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	sess = third.session(t)
	if err := sess.Query("SELECT v FROM served.t WHERE k = 1").Consistency(gocql.All).Scan(&v); err != nil || v != "kept" {
		t.Fatalf("on four shards, at ALL: %q %v", v, err)
	}
	sess.Close()
	third.stop(t)
}
