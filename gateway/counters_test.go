package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
)

// gatewayProcess is a `cqlpg serve` running as a process of its own on
// the shared shards: a second gateway that shares nothing with the test's
// but the PostgreSQL servers.
type gatewayProcess struct {
	cmd    *osexec.Cmd
	port   int
	mu     sync.Mutex
	output strings.Builder
	done   chan error
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startGatewayProcess builds cmd/cqlpg and serves it on shards, waiting
// until it is ready. It reads the schema when it starts, so tables must
// exist by then.
func startGatewayProcess(t *testing.T, shards []string) *gatewayProcess {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cqlpg")
	if out, err := osexec.Command("go", "build", "-o", bin, "../cmd/cqlpg").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p := &gatewayProcess{port: freeTCPPort(t), done: make(chan error, 1)}
	httpPort := freeTCPPort(t)
	args := []string{"serve", "--listen", "127.0.0.1:" + strconv.Itoa(p.port),
		"--http", "127.0.0.1:" + strconv.Itoa(httpPort), "--log-level", "warn"}
	for _, s := range shards {
		args = append(args, "--shard", s)
	}
	p.cmd = osexec.Command(bin, args...)
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.mu.Lock()
			p.output.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	go func() { p.done <- p.cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(httpPort) + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case err := <-p.done:
			t.Fatalf("cqlpg serve exited: %v\n%s", err, p.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("cqlpg serve never became ready\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *gatewayProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// session opens a gocql session on the process, with the driver's defaults.
func (p *gatewayProcess) session(t *testing.T, keyspace string) *gocql.Session {
	t.Helper()
	cfg := gocql.NewCluster("127.0.0.1")
	cfg.Port = p.port
	cfg.Keyspace = keyspace
	cfg.Timeout = 10 * time.Second
	cfg.ConnectTimeout = 10 * time.Second
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatalf("connect to the gateway process: %v\n%s", err, p.log())
	}
	t.Cleanup(sess.Close)
	return sess
}

// onEveryShard runs a query on each shared shard directly and returns, per
// shard, its rows with the columns rendered by fmt and joined by " | ".
func onEveryShard(t *testing.T, sql string, args ...any) [][]string {
	t.Helper()
	ctx := context.Background()
	out := make([][]string, len(shardURLs))
	for i, u := range shardURLs {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			conn.Close(ctx)
			t.Fatalf("shard %d: %s: %v", i, sql, err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for j, v := range vals {
				parts[j] = fmt.Sprint(v)
			}
			out[i] = append(out[i], strings.Join(parts, " | "))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("shard %d: %s: %v", i, sql, err)
		}
		conn.Close(ctx)
	}
	return out
}

// storedTable returns the quoted Postgres name of a CQL table and a
// function naming the Postgres column of a CQL column, from the catalog.
func storedTable(t *testing.T, keyspace, table string) (string, func(string) string) {
	t.Helper()
	schema := onEveryShard(t, "SELECT pg_schema FROM cqlpg.keyspaces WHERE keyspace_name = $1", keyspace)[0]
	if len(schema) != 1 {
		t.Fatalf("keyspace %s not in the catalog", keyspace)
	}
	cols := map[string]string{}
	for _, row := range onEveryShard(t, "SELECT column_name || ' | ' || pg_column FROM cqlpg.columns "+
		"WHERE keyspace_name = $1 AND table_name = $2", keyspace, table)[0] {
		name, pg, _ := strings.Cut(row, " | ")
		cols[name] = pg
	}
	return pgx.Identifier{schema[0], table}.Sanitize(), func(c string) string {
		if cols[c] == "" {
			t.Fatalf("column %s.%s.%s not in the catalog", keyspace, table, c)
		}
		return pgx.Identifier{cols[c]}.Sanitize()
	}
}

// TestCountersConcurrent increments counters from 32 clients spread over
// two gateways, one in this process and one a process of its own, with a
// replication factor of 3: every increment and decrement must count once
// on every replica, whether it comes alone, prepared or not, or in a
// counter batch.
func TestCountersConcurrent(t *testing.T) {
	exec(t, session(t, ""),
		"CREATE KEYSPACE counters_rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE counters_rf3.c (k int, c int, up counter, down counter, PRIMARY KEY (k, c))")
	other := startGatewayProcess(t, shardURLs)
	sessions := []*gocql.Session{sessionOn(t, gw, "counters_rf3"), other.session(t, "counters_rf3")}

	const workers, per, rows = 32, 200, 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		sess := sessions[w%2]
		wg.Go(func() {
			for i := range per {
				k := (w + i) % rows
				var err error
				switch i % 4 {
				case 0:
					err = sess.Query("UPDATE c SET up = up + ?, down = down - ? WHERE k = ? AND c = 0", int64(1), int64(2), k).Exec()
				case 1:
					err = sess.Query(fmt.Sprintf("UPDATE c SET up = up + 1, down = down - 2 WHERE k = %d AND c = 0", k)).Exec()
				case 2:
					b := sess.NewBatch(gocql.CounterBatch)
					b.Query("UPDATE c SET up = up + 1 WHERE k = ? AND c = 0", k)
					b.Query("UPDATE c SET down = down - 2 WHERE k = ? AND c = 0", k)
					err = sess.ExecuteBatch(b)
				default:
					err = sess.Query("BEGIN COUNTER BATCH UPDATE c SET up = up + 1 WHERE k = ? AND c = 0; "+
						"UPDATE c SET down = down + ? WHERE k = ? AND c = 0; APPLY BATCH", k, int64(-2), k).Exec()
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d, increment %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d counter updates (two cells each) in %v: %.0f updates/s over two gateways, RF=3",
		workers*per, elapsed.Round(time.Millisecond), float64(workers*per)/elapsed.Seconds())

	want := int64(workers * per / rows)
	for i, sess := range sessions {
		for k := range rows {
			var up, down int64
			if err := sess.Query("SELECT up, down FROM c WHERE k = ? AND c = 0", k).Scan(&up, &down); err != nil {
				t.Fatal(err)
			}
			if up != want || down != -2*want {
				t.Errorf("gateway %d, k=%d: up %d down %d, want %d %d", i, k, up, down, want, -2*want)
			}
		}
	}
	table, col := storedTable(t, "counters_rf3", "c")
	perShard := onEveryShard(t, fmt.Sprintf("SELECT %s, %s, %s FROM %s ORDER BY 1",
		col("k"), col("up"), col("down"), table))
	var wantRows []string
	for k := range rows {
		wantRows = append(wantRows, fmt.Sprintf("%d | %d | %d", k, want, -2*want))
	}
	for i, got := range perShard {
		if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
			t.Errorf("replica on shard %d holds\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
		}
	}
}

// BenchmarkCounters measures counter increments with a replication factor
// of 3 on the shared gateway, from one client and from parallel clients on
// a few rows.
func BenchmarkCounters(b *testing.B) {
	sess := sessionOn(b, gw, "")
	exec(b, sess, "CREATE KEYSPACE IF NOT EXISTS counters_bench WITH replication = "+
		"{'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE IF NOT EXISTS counters_bench.c (k int PRIMARY KEY, n counter)")
	sess = sessionOn(b, gw, "counters_bench")
	var i atomic.Int64
	inc := func(b *testing.B) {
		if err := sess.Query("UPDATE c SET n = n + 1 WHERE k = ?", i.Add(1)%4).Exec(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			inc(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				inc(b)
			}
		})
	})
}
