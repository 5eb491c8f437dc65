package localpg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ServerOSUser is the OS account PostgreSQL runs as when cqlpg runs as root.
const ServerOSUser = "postgres"

// osUser is the identity PostgreSQL processes run with. cred is nil when they
// run as the calling user; otherwise the process is root and cred switches to
// ServerOSUser.
type osUser struct {
	name string
	uid  int
	gids []int // primary group first, then supplementary groups
	cred *syscall.Credential
	env  []string
}

// serverUser decides which OS user runs PostgreSQL.
func serverUser() (*osUser, error) {
	if os.Geteuid() != 0 {
		u := &osUser{name: strconv.Itoa(os.Geteuid()), uid: os.Geteuid(), gids: []int{os.Getegid()}}
		if cur, err := user.Current(); err == nil {
			u.name = cur.Username
		}
		u.env = cleanEnv(os.Environ())
		return u, nil
	}
	pu, err := user.Lookup(ServerOSUser)
	if err != nil {
		return nil, fmt.Errorf("localpg: PostgreSQL refuses to run as root, so it must run as OS user %q, "+
			"which cannot be found (%w): create it (e.g. `useradd --system --home-dir /var/lib/postgresql postgres`) "+
			"or run cqlpg as an unprivileged user", ServerOSUser, err)
	}
	uid, err1 := strconv.Atoi(pu.Uid)
	gid, err2 := strconv.Atoi(pu.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("localpg: OS user %q has a non-numeric uid or gid: %w", ServerOSUser, err)
	}
	u := &osUser{name: pu.Username, uid: uid, gids: []int{gid}}
	groups := []uint32{}
	if ids, err := pu.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.Atoi(s); err == nil && g != gid {
				u.gids = append(u.gids, g)
				groups = append(groups, uint32(g))
			}
		}
	}
	u.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	home := pu.HomeDir
	if home == "" {
		home = "/"
	}
	u.env = []string{
		"HOME=" + home,
		"USER=" + pu.Username,
		"LOGNAME=" + pu.Username,
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8",
	}
	if tz, ok := os.LookupEnv("TZ"); ok {
		u.env = append(u.env, "TZ="+tz)
	}
	return u, nil
}

// cleanEnv drops variables that would make PostgreSQL programs act on a
// different cluster (PGDATA, PGPORT, ...) or localize their messages, which
// would break matching on log text.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LANG=C.UTF-8")
}

// command prepares a PostgreSQL program to run as u. The working directory is
// "/" because the caller's may be unreadable for the postgres user.
func (u *osUser) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = u.env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred, Setpgid: true}
	// On cancellation kill the whole process group: a killed initdb would
	// otherwise leave its single-user postgres child writing to the data
	// directory. The postmaster escapes this, as it calls setsid.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// The postmaster redirects its output, but a misbehaving child holding
	// our pipes must not block Wait forever.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// switched reports whether PostgreSQL runs as a different user than us.
func (u *osUser) switched() bool { return u.cred != nil }

// chown gives path to u; a no-op unless the user is switched.
func (u *osUser) chown(path string) error {
	if !u.switched() {
		return nil
	}
	return os.Lchown(path, u.uid, u.gids[0])
}

// chownTree gives every file under root to u.
func (u *osUser) chownTree(root string) error {
	if !u.switched() {
		return nil
	}
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return u.chown(path)
	})
}

// owns reports whether path is owned by u.
func (u *osUser) owns(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == u.uid, nil
}

// mkdirAll creates dir and its missing parents with mode 0755, regardless of
// the umask, so that a switched user can traverse them.
func mkdirAll(dir string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for _, p := range slices.Backward(missing) {
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := os.Chmod(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// checkTraversable fails when u cannot reach dir because an ancestor lacks
// the search permission for it. PostgreSQL would fail later with a far less
// helpful message. ACLs are not considered.
func (u *osUser) checkTraversable(dir string) error {
	if !u.switched() {
		return nil
	}
	var ancestors []string
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		ancestors = append(ancestors, p)
		if p == filepath.Dir(p) {
			break
		}
	}
	for _, p := range slices.Backward(ancestors) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("localpg: %w", err)
		}
		if !canSearch(fi, u.uid, u.gids) {
			return fmt.Errorf("localpg: PostgreSQL runs as OS user %q because cqlpg runs as root, but that user "+
				"cannot enter %s (mode %v) on the way to data directory %s: grant access with `chmod o+x %s` "+
				"or choose a data directory elsewhere (e.g. under /var/lib or /srv)", u.name, p, fi.Mode(), dir, p)
		}
	}
	return nil
}

// canSearch applies the Unix permission rules for directory search (x) by a
// user with the given uid and groups.
func canSearch(fi fs.FileInfo, uid int, gids []int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || uid == 0 {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case int(st.Uid) == uid:
		return perm&0o100 != 0
	case slices.Contains(gids, int(st.Gid)):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}
