package gateway_test

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/apache/cassandra-gocql-driver/v2/lz4"
	"github.com/apache/cassandra-gocql-driver/v2/snappy"
)

// v2Config returns an unmodified configuration of the Apache gocql driver
// 2.x for a gateway, with the driver's defaults except for the address:
// it discovers the protocol version itself, starting from v5.
func v2Config(s interface{ Addr() net.Addr }) *gocql2.ClusterConfig {
	host, port, _ := net.SplitHostPort(s.Addr().String())
	cfg := gocql2.NewCluster(host)
	cfg.Port, _ = strconv.Atoi(port)
	cfg.Timeout = 10 * time.Second
	cfg.ConnectTimeout = 10 * time.Second
	cfg.HostFilter = gocql2.HostFilterFunc(func(h *gocql2.HostInfo) bool {
		return h.Port() == cfg.Port && h.ConnectAddress().String() == host
	})
	return cfg
}

// versionObserver records the protocol version of the frames the driver
// reads.
type versionObserver struct {
	mu       sync.Mutex
	versions map[byte]int
}

func (o *versionObserver) ObserveFrameHeader(_ context.Context, h gocql2.ObservedFrameHeader) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.versions == nil {
		o.versions = map[byte]int{}
	}
	o.versions[byte(h.Version)&0x7f]++
}

func (o *versionObserver) reset() map[byte]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := o.versions
	o.versions = nil
	return v
}

// countingV2Compressor counts what the driver compressed and decompressed.
type countingV2Compressor struct {
	gocql2.Compressor
	compressed, decompressed atomic.Int64
}

func (c *countingV2Compressor) AppendCompressedWithLength(dst, src []byte) ([]byte, error) {
	c.compressed.Add(1)
	return c.Compressor.AppendCompressedWithLength(dst, src)
}

func (c *countingV2Compressor) AppendDecompressedWithLength(dst, src []byte) ([]byte, error) {
	c.decompressed.Add(1)
	return c.Compressor.AppendDecompressedWithLength(dst, src)
}

func (c *countingV2Compressor) AppendCompressed(dst, src []byte) ([]byte, error) {
	c.compressed.Add(1)
	return c.Compressor.AppendCompressed(dst, src)
}

func (c *countingV2Compressor) AppendDecompressed(dst, src []byte, n uint32) ([]byte, error) {
	c.decompressed.Add(1)
	return c.Compressor.AppendDecompressed(dst, src, n)
}

// TestGocqlV2 drives the gateway with the Apache gocql driver 2.x: it
// negotiates v5 (v4 with Snappy, which v5 refuses, as Cassandra 4.1 makes
// it), then runs DDL, prepared statements, paging, batches, v5's keyspace
// and now_in_seconds, and tracing, without compression and with LZ4 and
// Snappy.
func TestGocqlV2(t *testing.T) {
	exec(t, session(t, ""), "CREATE KEYSPACE gocqlv2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for _, tc := range []struct {
		name    string
		comp    gocql2.Compressor
		version byte
	}{
		{"none", nil, 5},
		{"lz4", lz4.LZ4Compressor{}, 5},
		{"snappy", snappy.SnappyCompressor{}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &versionObserver{}
			cfg := v2Config(gw)
			cfg.FrameHeaderObserver = obs
			var counting *countingV2Compressor
			if tc.comp != nil {
				counting = &countingV2Compressor{Compressor: tc.comp}
				cfg.Compressor = counting
			}
			start := time.Now()
			sess, err := cfg.CreateSession()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("gocql v2 (compression %s) connected in %v", tc.name, time.Since(start).Round(time.Millisecond))
			defer sess.Close()
			obs.reset() // protocol discovery reads error frames in other versions

			table := "gocqlv2.t_" + tc.name
			if err := sess.Query("CREATE TABLE " + table + " (k int, c int, v text, PRIMARY KEY (k, c))").Exec(); err != nil {
				t.Fatal(err)
			}
			text := strings.Repeat("y", 1000)
			for c := range 10 {
				if err := sess.Query("INSERT INTO "+table+" (k, c, v) VALUES (?, ?, ?)", 1, c, text).Exec(); err != nil {
					t.Fatal(err)
				}
			}
			b := sess.Batch(gocql2.LoggedBatch)
			for c := 10; c < 20; c++ {
				b.Query("INSERT INTO "+table+" (k, c, v) VALUES (?, ?, ?)", 1, c, text)
			}
			if err := b.Exec(); err != nil {
				t.Fatal(err)
			}
			iter := sess.Query("SELECT c, v FROM "+table+" WHERE k = ?", 1).PageSize(7).Iter()
			var c, n int
			var v string
			for iter.Scan(&c, &v) {
				if c != n || v != text {
					t.Fatalf("row %d: c=%d, %d bytes", n, c, len(v))
				}
				n++
			}
			if err := iter.Close(); err != nil || n != 20 {
				t.Fatalf("paged read: %d rows, %v", n, err)
			}

			if tc.version >= 5 {
				// The keyspace a query names, and its clock.
				var count int
				if err := sess.Query("SELECT count(*) FROM t_"+tc.name+" WHERE k = ?", 1).SetKeyspace("gocqlv2").Scan(&count); err != nil || count != 20 {
					t.Errorf("count in the named keyspace: %d, %v", count, err)
				}
				past := int(time.Now().Unix() - 50)
				if err := sess.Query("INSERT INTO " + table + " (k, c, v) VALUES (2, 0, 'x') USING TTL 100").WithNowInSeconds(past).Exec(); err != nil {
					t.Fatal(err)
				}
				var ttl int
				if err := sess.Query("SELECT TTL(v) FROM " + table + " WHERE k = 2 AND c = 0").Scan(&ttl); err != nil || ttl > 50 || ttl < 40 {
					t.Errorf("TTL %d after now_in_seconds 50 s back, want about 50: %v", ttl, err)
				}
			}

			var trace bytes.Buffer
			if err := sess.Query("SELECT v FROM " + table + " WHERE k = 1 AND c = 0").Trace(gocql2.NewTraceWriter(sess, &trace)).Exec(); err != nil {
				t.Fatal(err)
			}
			if out := trace.String(); !strings.Contains(out, "Tracing session") || !strings.Contains(out, "Request complete") {
				t.Errorf("trace:\n%s", out)
			}

			versions := obs.reset()
			if versions[tc.version] == 0 {
				t.Errorf("no frames in v%d: %v", tc.version, versions)
			}
			for ver := range versions {
				if ver != tc.version {
					t.Errorf("frames in versions %v, want v%d only", versions, tc.version)
					break
				}
			}
			if counting != nil && (counting.compressed.Load() == 0 || counting.decompressed.Load() == 0) {
				t.Errorf("compressed %d, decompressed %d: compression not in use", counting.compressed.Load(), counting.decompressed.Load())
			}
		})
	}
}

// TestGocqlConnectTime reports how long each driver takes from creating a
// session to having it ready, against the shared gateway.
func TestGocqlConnectTime(t *testing.T) {
	const rounds = 5
	var v1, v2 time.Duration
	for range rounds {
		start := time.Now()
		s1, err := clusterConfig(gw, "").CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		v1 += time.Since(start)
		s1.Close()
		start = time.Now()
		s2, err := v2Config(gw).CreateSession()
		if err != nil {
			t.Fatal(err)
		}
		v2 += time.Since(start)
		s2.Close()
	}
	t.Logf("session ready in %v with gocql 1.7 (v4), %v with gocql 2.x (v5), mean of %d",
		(v1 / rounds).Round(time.Millisecond), (v2 / rounds).Round(time.Millisecond), rounds)
}
