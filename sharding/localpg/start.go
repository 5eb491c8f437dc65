package localpg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// portAttempts bounds how often Start retries with a new port after losing
// the race for an automatically picked one to another process.
const portAttempts = 3

// start starts the server of a prepared cluster on port want (0: recorded or
// free), or adopts a server that is still running. The caller holds c.mu.
func (c *Cluster) start(ctx context.Context, want int) error {
	if pm, ok := livePostmaster(c.dir); ok {
		if pm.status != "stopping" {
			return c.adopt(ctx, pm, want)
		}
		c.log.Info("waiting for a PostgreSQL server that is shutting down", "pid", pm.pid)
		if err := waitGone(ctx, []int{pm.pid}); err != nil {
			return err
		}
	}
	if err := c.makeSocketDir(); err != nil {
		return err
	}
	if err := removeStaleLocks(c.dir, c.socketDir); err != nil {
		return err
	}
	c.rotateLog()
	var offset int64
	for attempt := 1; ; attempt++ {
		port, err := c.choosePort(want, attempt > 1)
		if err != nil {
			return err
		}
		if err := writeConf(c.dir, renderConf(port, c.socketDir, c.settings), c.user); err != nil {
			return err
		}
		offset = fileSize(c.logFile)
		begin := time.Now()
		out, err := c.user.command(ctx, c.bins.PgCtl, "start", "-w", "-t", "60", "-s",
			"-D", c.dir, "-l", c.logFile).CombinedOutput()
		if err == nil {
			c.port.Store(int32(port))
			c.log.Info("started PostgreSQL", "port", port, "took", time.Since(begin))
			break
		}
		if want == 0 && attempt < portAttempts && ctx.Err() == nil && c.portTaken(offset) {
			c.log.Warn("port taken by another process; retrying with another", "port", port)
			continue
		}
		c.abort()
		return c.failure("pg_ctl start", err, out, offset)
	}
	if err := c.waitReady(ctx, startedTimeout); err != nil {
		c.abort()
		return c.failure("connect", err, nil, offset)
	}
	return nil
}

// adopt takes over a server left running by an earlier process, so that a
// gateway that crashed can be restarted without touching its shards.
func (c *Cluster) adopt(ctx context.Context, pm postmaster, want int) error {
	port := pm.port
	if port == 0 {
		port = recordedPort(c.dir)
	}
	if want != 0 && want != port {
		return fmt.Errorf("localpg: a PostgreSQL server (pid %d) from an earlier run is still running in %s on "+
			"port %d, not the requested %d; stop it with `%s stop -D %s`", pm.pid, c.dir, port, want, c.bins.PgCtl, c.dir)
	}
	c.port.Store(int32(port))
	// Refresh the settings; those that need a restart are ignored (and
	// logged) by the server until the next restart.
	if err := writeConf(c.dir, renderConf(port, c.socketDir, c.settings), c.user); err != nil {
		return err
	}
	offset := fileSize(c.logFile)
	if out, err := c.user.command(ctx, c.bins.PgCtl, "reload", "-s", "-D", c.dir).CombinedOutput(); err != nil {
		return c.failure("pg_ctl reload", err, out, offset)
	}
	if err := c.waitReady(ctx, readyTimeout); err != nil {
		return c.failure("connect", err, nil, offset)
	}
	c.log.Info("adopted running PostgreSQL", "pid", pm.pid, "port", port)
	return nil
}

// abort stops a server whose start failed half-way, even when ctx was
// cancelled, so that a failed Start leaves nothing running.
func (c *Cluster) abort() {
	if _, ok := livePostmaster(c.dir); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	c.user.command(ctx, c.bins.PgCtl, "stop", "-w", "-s", "-m", "immediate", "-D", c.dir).Run()
}

// makeSocketDir creates the socket directory when it is not the data
// directory; it lives in the temp dir, which a reboot may have cleaned.
func (c *Cluster) makeSocketDir() error {
	if c.socketDir == c.dir {
		return nil
	}
	if err := c.user.checkTraversable(c.socketDir); err != nil {
		return err
	}
	if err := os.Mkdir(c.socketDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("localpg: %w", err)
	}
	if err := c.user.chown(c.socketDir); err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	if owned, err := c.user.owns(c.socketDir); err != nil || !owned {
		return fmt.Errorf("localpg: socket directory %s must belong to OS user %q (%v)", c.socketDir, c.user.name, err)
	}
	return nil
}

// rotateLog keeps one previous generation of a server log that grew large,
// since pg_ctl only ever appends to it.
func (c *Cluster) rotateLog() {
	if fileSize(c.logFile) > maxLogSize {
		os.Rename(c.logFile, c.logFile+".1") // best effort: a large log only wastes space
	}
}

// choosePort returns want if set; otherwise the recorded port if it is free
// and skipRecorded is false; otherwise a free port.
func (c *Cluster) choosePort(want int, skipRecorded bool) (int, error) {
	if want != 0 {
		return want, nil
	}
	if p := recordedPort(c.dir); p > 0 && !skipRecorded && portFree(p) && claimPort(p, c.dir) {
		return p, nil
	}
	return freePort(c.dir)
}

// portTaken reports whether the server log since offset says the port was
// already in use.
func (c *Cluster) portTaken(offset int64) bool {
	return strings.Contains(readFrom(c.logFile, offset, 64<<10), "Address already in use")
}

var (
	portMu  sync.Mutex
	claimed = map[int]string{} // port -> data directory it was handed to
)

// claimPort records p as handed to the cluster in dir and reports whether no
// other cluster of this process holds it, so that clusters started in parallel
// never pick the same port before either has bound it.
func claimPort(p int, dir string) bool {
	portMu.Lock()
	defer portMu.Unlock()
	if owner, ok := claimed[p]; ok && owner != dir {
		return false
	}
	claimed[p] = dir
	return true
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// freePort asks the kernel for an unused port. Another process may take it
// before the server binds it; Start retries in that case.
func freePort(dir string) (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("localpg: pick a free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if claimPort(p, dir) {
			return p, nil
		}
	}
	return 0, errors.New("localpg: pick a free port: the kernel keeps returning ports already in use")
}

// failure builds a Start/Stop error that includes command output and the
// server log written since offset (or its tail if nothing was written).
func (c *Cluster) failure(what string, err error, out []byte, offset int64) error {
	var b strings.Builder
	if out = bytes.TrimSpace(out); len(out) > 0 {
		fmt.Fprintf(&b, "\n%s", out)
	}
	tail := readFrom(c.logFile, offset, 8<<10)
	if tail == "" {
		tail = readFrom(c.logFile, 0, 8<<10)
	}
	if tail = lastLines(tail, 30); tail != "" {
		fmt.Fprintf(&b, "\nserver log %s (last lines):\n%s", c.logFile, tail)
	}
	return fmt.Errorf("localpg: %s in %s: %w%s", what, c.dir, err, b.String())
}

// readFrom returns at most limit bytes of path from offset on, preferring
// the end of the file.
func readFrom(path string, offset, limit int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	size := fileSize(path)
	offset = max(offset, size-limit, 0)
	data, _ := io.ReadAll(io.NewSectionReader(f, offset, size-offset))
	return string(data)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
