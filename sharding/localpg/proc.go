package localpg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// postmaster is what postmaster.pid says about a running server.
type postmaster struct {
	pid    int
	port   int
	status string // "starting", "ready", "stopping" or "standby"
}

// livePostmaster reads dir/postmaster.pid and reports whether the process it
// names is still a live server for dir. A stale file left by a crash, or one
// whose pid now belongs to an unrelated process, yields false.
func livePostmaster(dir string) (postmaster, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return postmaster{}, false
	}
	lines := strings.Split(string(data), "\n")
	var pm postmaster
	if pm.pid, err = strconv.Atoi(strings.TrimSpace(lines[0])); err != nil || pm.pid <= 0 {
		return postmaster{}, false
	}
	if len(lines) > 3 {
		pm.port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	}
	if len(lines) > 7 {
		pm.status = strings.TrimSpace(lines[7])
	}
	return pm, alive(pm.pid) && runsIn(pm.pid, dir)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	state, _, err := procStat(pid)
	return err != nil || state != 'Z'
}

// runsIn guards against pid reuse: the postmaster's working directory is its
// data directory. Without /proc the check cannot be made and passes.
func runsIn(pid int, dir string) bool {
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return true
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	return cwd == dir
}

// procStat returns the state and parent pid of pid from /proc.
func procStat(pid int) (state byte, ppid int, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name in parentheses may contain spaces; fields after the
	// last ')' are "state ppid ...".
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("localpg: unexpected /proc/%d/stat format", pid)
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 || len(fields[0]) != 1 {
		return 0, 0, fmt.Errorf("localpg: unexpected /proc/%d/stat format", pid)
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0][0], ppid, err
}

// children lists the processes whose parent is pid. Each postmaster child
// calls setsid, so a process-group signal would miss them.
func children(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("localpg: listing processes needs Linux /proc: %w", err)
	}
	var kids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, err := procStat(child); err == nil && ppid == pid {
			kids = append(kids, child)
		}
	}
	return kids, nil
}

// signalAll sends sig to every pid; processes that already exited are fine.
func signalAll(pids []int, sig syscall.Signal) error {
	var errs []error
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("localpg: send %v to pid %d: %w", sig, pid, err))
		}
	}
	return errors.Join(errs...)
}

// waitGone polls until none of pids is alive. The processes are not our
// children (pg_ctl detaches the postmaster), so they cannot be waited for.
func waitGone(ctx context.Context, pids []int) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		running := 0
		for _, pid := range pids {
			if alive(pid) {
				running++
			}
		}
		if running == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localpg: %d PostgreSQL processes still running: %w", running, ctx.Err())
		case <-tick.C:
		}
	}
}

// removeStaleLocks deletes postmaster.pid and the socket lock files when the
// pid they name is not a live server for dir. PostgreSQL clears such files
// itself only if that pid names no process at all, which is not the case
// while a killed postmaster is a zombie its parent has not reaped yet, or
// when the pid has been reused. The caller has checked that no server runs.
func removeStaleLocks(dir, socketDir string) error {
	locks, _ := filepath.Glob(filepath.Join(socketDir, ".s.PGSQL.*.lock"))
	for _, path := range append([]string{filepath.Join(dir, "postmaster.pid")}, locks...) {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(data), "\n")
		pid, err := strconv.Atoi(strings.TrimSpace(first))
		if err == nil && pid > 0 && alive(pid) && runsIn(pid, dir) {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("localpg: remove stale lock file: %w", err)
		}
	}
	return nil
}
