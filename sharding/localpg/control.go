package localpg

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// killTimeout bounds how long Kill waits for the killed processes to vanish.
const killTimeout = 10 * time.Second

// Stop shuts the server down with pg_ctl's fast mode (active transactions
// are rolled back, a checkpoint is written) and waits for it to exit. A
// paused server is resumed first; stopping a server that is not running is
// not an error.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop(ctx)
}

func (c *Cluster) stop(ctx context.Context) error {
	_, running := livePostmaster(c.dir)
	if c.paused && running {
		if err := c.signalTree(syscall.SIGCONT, false); err != nil {
			return err
		}
	}
	c.paused = false
	if !running {
		return nil
	}
	offset := fileSize(c.logFile)
	begin := time.Now()
	out, err := c.user.command(ctx, c.bins.PgCtl, "stop", "-w", "-t", "60", "-s", "-m", "fast", "-D", c.dir).CombinedOutput()
	if err != nil {
		return c.failure("pg_ctl stop", err, out, offset)
	}
	c.log.Info("stopped PostgreSQL", "took", time.Since(begin))
	c.removeSocketDir()
	return nil
}

// removeSocketDir deletes a socket directory outside the data directory once
// the server is down, so that stopped clusters leave nothing in the temp dir.
// The server has removed its socket and lock files, so the directory is empty
// unless something else uses it, in which case it stays.
func (c *Cluster) removeSocketDir() {
	if c.socketDir != c.dir {
		os.Remove(c.socketDir)
	}
}

// Restart starts the server again on the same port, stopping it first if it
// is running; it is how tests bring a cluster back after Stop or Kill.
func (c *Cluster) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.stop(ctx); err != nil {
		return err
	}
	return c.start(ctx, c.Port())
}

// Kill simulates a crash of the machine: it SIGKILLs the postmaster and all
// its children and waits until they are gone. Killing only the postmaster
// would leave backends attached to its shared memory, and PostgreSQL refuses
// to start while they live. Start or Restart recover the cluster.
func (c *Cluster) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	pm, ok := livePostmaster(c.dir)
	if !ok {
		return fmt.Errorf("localpg: no PostgreSQL server is running in %s", c.dir)
	}
	// Freeze the postmaster so it cannot fork children we would miss.
	if err := signalAll([]int{pm.pid}, syscall.SIGSTOP); err != nil {
		return err
	}
	kids, err := children(pm.pid)
	if err != nil {
		return err
	}
	pids := append([]int{pm.pid}, kids...)
	if err := signalAll(pids, syscall.SIGKILL); err != nil {
		return err
	}
	c.paused = false
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	return waitGone(ctx, pids)
}

// Pause freezes the server with SIGSTOP on the postmaster and all its
// children: connections stay open but nothing answers, which is how tests
// simulate a slow or hung shard. Resume undoes it.
func (c *Cluster) Pause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		return nil
	}
	if err := c.signalTree(syscall.SIGSTOP, true); err != nil {
		return err
	}
	c.paused = true
	return nil
}

// Resume continues a server frozen by Pause.
func (c *Cluster) Resume() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return nil
	}
	if err := c.signalTree(syscall.SIGCONT, false); err != nil {
		return err
	}
	c.paused = false
	return nil
}

// signalTree signals the postmaster and its children. When postmasterFirst
// is set (stopping) the postmaster is frozen before its children are listed
// so it cannot fork unseen ones; when resuming, the children continue first
// so the postmaster never runs against frozen children.
func (c *Cluster) signalTree(sig syscall.Signal, postmasterFirst bool) error {
	pm, ok := livePostmaster(c.dir)
	if !ok {
		return fmt.Errorf("localpg: no PostgreSQL server is running in %s", c.dir)
	}
	if postmasterFirst {
		if err := signalAll([]int{pm.pid}, sig); err != nil {
			return err
		}
	}
	kids, err := children(pm.pid)
	if err != nil {
		return err
	}
	if err := signalAll(kids, sig); err != nil {
		return err
	}
	if !postmasterFirst {
		return signalAll([]int{pm.pid}, sig)
	}
	return nil
}
