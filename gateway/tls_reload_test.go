package gateway_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/certs"
	"github.com/cqlpg/cqlpg/gateway/certs/certstest"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// loadCerts reads the PKI's server certificate files for a listener,
// with clientCA's authorities unless it is empty.
func loadCerts(t *testing.T, pki *testPKI, clientCA string) *certs.Files {
	t.Helper()
	f, err := certs.Load(pki.serverCert, pki.serverKey, clientCA, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// startTLSGateway starts a gateway whose CQL listener requires client
// certificates of the PKI and whose HTTP listener speaks HTTPS, each
// serving the PKI's server certificate files.
func startTLSGateway(t *testing.T, pki *testPKI) *gateway.Server {
	t.Helper()
	s := startGatewayWith(t, func(c *gateway.Config) {
		c.HTTP = "127.0.0.1:0"
		c.TLSCerts = loadCerts(t, pki, pki.caFile)
		c.HTTPCerts = loadCerts(t, pki, "")
	})
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// clientTLS is a client's TLS settings: trusting the PKI's authority, with
// its client certificate.
func clientTLS(pki *testPKI) *tls.Config {
	return &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}}
}

// servedSerial opens a new TLS connection to addr and returns the serial
// number of the certificate the server presents.
func servedSerial(t *testing.T, pki *testPKI, addr string) int64 {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, clientTLS(pki))
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", addr, err)
	}
	defer conn.Close()
	return peerSerial(conn.ConnectionState())
}

func peerSerial(cs tls.ConnectionState) int64 {
	if len(cs.PeerCertificates) == 0 {
		return 0
	}
	return cs.PeerCertificates[0].SerialNumber.Int64()
}

// httpsClient is an HTTP client of its own connections, trusting the
// PKI's authority.
func httpsClient(pki *testPKI) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: clientTLS(pki)}}
}

// httpAnswer is what a GET got, and on which connection.
type httpAnswer struct {
	status int
	body   string
	serial int64
	local  string
	reused bool
}

func httpGet(t *testing.T, client *http.Client, url string) httpAnswer {
	t.Helper()
	var a httpAnswer
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		a.local, a.reused = info.Conn.LocalAddr().String(), info.Reused
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", url, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a.status, a.body = resp.StatusCode, string(body)
	if resp.TLS != nil {
		a.serial = peerSerial(*resp.TLS)
	}
	return a
}

// tlsRaw opens a CQL connection over TLS, as a client certificate's
// holder, and starts it.
func tlsRaw(t *testing.T, pki *testPKI, addr string) (*rawConn, *tls.Conn) {
	t.Helper()
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, clientTLS(pki))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	c := &rawConn{t: t, nc: nc, codec: frame.NewCodec()}
	c.startup(primitive.ProtocolVersion4)
	return c, nc
}

// releaseVersion asks a raw connection for system.local's release
// version, and fails the test unless rows answer.
func releaseVersion(t *testing.T, c *rawConn, stream int16) {
	t.Helper()
	c.sendMessage(primitive.ProtocolVersion4, stream, &message.Query{Query: "SELECT release_version FROM system.local",
		Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
	m := c.receive().Body.Message
	if rows, ok := m.(*message.RowsResult); !ok || len(rows.Data) != 1 {
		t.Fatalf("system.local on a connection opened before the reload: %v", m)
	}
}

// dialCounter dials TCP and counts the connections it opened.
type dialCounter struct{ n atomic.Int64 }

func (d *dialCounter) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
}

// TestTLSReload serves CQL and HTTPS with certificates from files, and
// replaces the files with a certificate of another serial number, twice:
// once followed by ReloadCertificates, once alone. Each time new
// connections to both listeners get the new certificate, and connections
// opened before (an HTTP keep-alive connection, a raw CQL connection, a
// gocql session) keep theirs and go on answering, never reconnected.
func TestTLSReload(t *testing.T) {
	pki := newTestPKI(t)
	s := startTLSGateway(t, pki)
	cqlAddr, httpAddr := s.Addr().String(), s.HTTPAddr().String()
	base := "https://" + httpAddr

	client := httpsClient(pki)
	for path, want := range map[string]string{"/metrics": "cqlpg_", "/readyz": "ready"} {
		if a := httpGet(t, client, base+path); a.status != http.StatusOK || !strings.Contains(a.body, want) || a.serial != 2 {
			t.Errorf("GET %s over HTTPS: %d, serial %d, %.200q", path, a.status, a.serial, a.body)
		}
	}
	// Plain HTTP is answered 400 by the HTTPS listener, never served.
	if resp, err := http.Get("http://" + httpAddr + "/metrics"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(body), "cqlpg_") {
			t.Errorf("plain GET /metrics of the HTTPS listener: %d %.200q", resp.StatusCode, body)
		}
	}

	// Connections opened before the files change.
	kept := httpsClient(pki)
	first := httpGet(t, kept, base+"/healthz")
	raw, rawTLS := tlsRaw(t, pki, cqlAddr)
	releaseVersion(t, raw, 3)
	dials := &dialCounter{}
	cfg := clusterConfig(s, "")
	cfg.SslOpts = &gocql.SslOptions{Config: clientTLS(pki), EnableHostVerification: true}
	cfg.Dialer = dials
	cfg.ReconnectInterval = 0
	sess, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var version string
	if err := sess.Query("SELECT release_version FROM system.local").Scan(&version); err != nil {
		t.Fatal(err)
	}
	opened := dials.n.Load()

	stream := int16(4)
	expect := func(step string, serial int64) {
		t.Helper()
		if got := servedSerial(t, pki, cqlAddr); got != serial {
			t.Errorf("%s: a new CQL connection gets serial %d, want %d", step, got, serial)
		}
		if got := httpGet(t, httpsClient(pki), base+"/healthz").serial; got != serial {
			t.Errorf("%s: a new HTTPS connection gets serial %d, want %d", step, got, serial)
		}
		if a := httpGet(t, kept, base+"/readyz"); a.status != http.StatusOK || !a.reused || a.local != first.local || a.serial != 2 {
			t.Errorf("%s: the keep-alive connection %s: %d, reused %v on %s, serial %d", step, first.local, a.status, a.reused, a.local, a.serial)
		}
		releaseVersion(t, raw, stream)
		stream++
		if got := peerSerial(rawTLS.ConnectionState()); got != 2 {
			t.Errorf("%s: the CQL connection opened before has serial %d", step, got)
		}
		for range 10 {
			if err := sess.Query("SELECT release_version FROM system.local").Scan(&version); err != nil {
				t.Errorf("%s: the gocql session: %v", step, err)
			}
		}
		if n := dials.n.Load(); n != opened {
			t.Errorf("%s: the gocql session opened %d connections, %d before", step, n, opened)
		}
	}

	pki.issueServer(t, 4)
	if err := s.ReloadCertificates(); err != nil {
		t.Fatal(err)
	}
	expect("after ReloadCertificates", 4)

	// No call: a handshake a second after the last looked finds the files
	// changed.
	pki.issueServer(t, 5)
	time.Sleep(1100 * time.Millisecond)
	expect("after the files changed", 5)
}

// TestTLSBadReload replaces the key file with garbage: ReloadCertificates
// fails naming it, handshakes after a second do not load it either, and
// both listeners go on serving the certificate they had; once the files
// hold a good certificate again, handshakes load it.
func TestTLSBadReload(t *testing.T) {
	pki := newTestPKI(t)
	s := startTLSGateway(t, pki)
	addrs := []string{s.Addr().String(), s.HTTPAddr().String()}
	serving := func(step string, serial int64) {
		t.Helper()
		for _, addr := range addrs {
			if got := servedSerial(t, pki, addr); got != serial {
				t.Errorf("%s: %s serves serial %d, want %d", step, addr, got, serial)
			}
		}
	}

	if err := os.WriteFile(pki.serverKey, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.ReloadCertificates()
	if err == nil || !strings.Contains(err.Error(), pki.serverKey) {
		t.Errorf("ReloadCertificates with a garbage key: %v, want an error naming %s", err, pki.serverKey)
	}
	serving("after a failed reload", 2)
	// A certificate renewed without its key does not load either.
	renewed, _ := pki.ca.Issue(t, 6, "cqlpg", x509.ExtKeyUsageServerAuth)
	certstest.WriteFile(t, pki.serverCert, renewed)
	time.Sleep(1100 * time.Millisecond)
	serving("with the certificate's key missing", 2)

	pki.issueServer(t, 7)
	time.Sleep(1100 * time.Millisecond)
	serving("with good files again", 7)
}

// TestMetricsAuth puts /metrics behind the web view's login: without
// credentials 401, with the superuser's 200, with a wrong password 401,
// and past the failed logins allowed 429. Without the setting, /metrics
// needs no login even with authentication on, and the setting without
// authentication is refused.
func TestMetricsAuth(t *testing.T) {
	start := func(metricsAuth bool) string {
		s := startGatewayWith(t, func(c *gateway.Config) {
			c.HTTP = "127.0.0.1:0"
			c.Auth = gateway.AuthConfig{Enabled: true, SuperuserPassword: authSuperuserPassword, MaxFailedLogins: 2}
			c.MetricsAuth = metricsAuth
		})
		t.Cleanup(func() { s.Shutdown(context.Background()) })
		return "http://" + s.HTTPAddr().String() + "/metrics"
	}
	get := func(url, user, password string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)
	}

	closed := start(true)
	if code, challenge, body := get(closed, "", ""); code != http.StatusUnauthorized || challenge == "" || strings.Contains(body, "cqlpg_") {
		t.Errorf("/metrics without credentials: %d, WWW-Authenticate %q, %.200q", code, challenge, body)
	}
	if code, _, body := get(closed, "cassandra", authSuperuserPassword); code != http.StatusOK || !strings.Contains(body, "cqlpg_") {
		t.Errorf("/metrics as the superuser: %d, %.200q", code, body)
	}
	for range 2 {
		if code, _, body := get(closed, "cassandra", "wrong"); code != http.StatusUnauthorized || strings.Contains(body, "cqlpg_") {
			t.Errorf("/metrics with a wrong password: %d, %.200q", code, body)
		}
	}
	if code, _, body := get(closed, "cassandra", authSuperuserPassword); code != http.StatusTooManyRequests || strings.Contains(body, "cqlpg_") {
		t.Errorf("/metrics past the failed logins allowed: %d, %.200q", code, body)
	}

	open := start(false)
	if code, _, body := get(open, "", ""); code != http.StatusOK || !strings.Contains(body, "cqlpg_") {
		t.Errorf("/metrics without the setting: %d, %.200q", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := gateway.Config{Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Log: testLogger(), MetricsAuth: true}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	if s, err := gateway.New(ctx, cfg); err == nil {
		s.Shutdown(context.Background())
		t.Error("a login for /metrics without authentication was accepted")
	}
}
