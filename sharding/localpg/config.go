package localpg

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

const (
	// confFile is the settings file localpg owns; it is rewritten on every
	// start, so manual edits belong in postgresql.conf or postgresql.auto.conf.
	confFile    = "cqlpg.conf"
	includeLine = "include_if_exists = '" + confFile + "'"

	// maxSocketPath is the longest unix socket path the kernel accepts
	// (sizeof(sun_path) minus the terminating NUL).
	maxSocketPath = 107
	socketName    = "/.s.PGSQL.65535" // longest possible socket file name
)

// defaultSettings suit a small machine running several clusters side by side.
// Durability settings (fsync, synchronous_commit, ...) keep PostgreSQL's
// defaults; callers that want speed over safety pass them in Options.Settings.
var defaultSettings = map[string]string{
	"max_connections": "200",
	"shared_buffers":  "128MB",
	"timezone":        "UTC",
	"log_timezone":    "UTC",
}

// reservedSettings are derived from Options and the chosen port; letting
// Options.Settings override them would break URL.
var reservedSettings = []string{"port", "listen_addresses", "unix_socket_directories"}

var settingNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// validateSettings rejects names that are not PostgreSQL parameter names,
// which also keeps newlines and comments out of the generated file.
func validateSettings(settings map[string]string) error {
	for name := range settings {
		if !settingNameRE.MatchString(name) {
			return fmt.Errorf("localpg: invalid PostgreSQL setting name %q", name)
		}
		if slices.Contains(reservedSettings, strings.ToLower(name)) {
			return fmt.Errorf("localpg: setting %q is managed by localpg; use Options.Port instead", name)
		}
	}
	return nil
}

// renderConf produces the contents of cqlpg.conf. Later lines win in
// postgresql.conf, so caller settings follow the defaults.
func renderConf(port int, socketDir string, settings map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# Written by cqlpg on every start; edits are lost.\n")
	fmt.Fprintf(&b, "port = %d\n", port)
	b.WriteString("listen_addresses = '127.0.0.1'\n")
	fmt.Fprintf(&b, "unix_socket_directories = %s\n", quoteConf(dirListItem(socketDir)))
	for _, m := range []map[string]string{defaultSettings, settings} {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&b, "%s = %s\n", name, quoteConf(m[name]))
		}
	}
	return b.Bytes()
}

// quoteConf quotes a value for postgresql.conf. Every parameter type accepts
// a quoted value, so quoting unconditionally is safe.
func quoteConf(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(v) + "'"
}

// dirListItem quotes a directory for a comma-separated list setting such as
// unix_socket_directories, where commas and surrounding blanks are syntax.
func dirListItem(dir string) string {
	if !strings.ContainsAny(dir, ", \t\"") {
		return dir
	}
	return `"` + strings.ReplaceAll(dir, `"`, `""`) + `"`
}

// writeConf installs cqlpg.conf atomically and makes sure postgresql.conf
// includes it.
func writeConf(dir string, content []byte, u *osUser) error {
	tmp := filepath.Join(dir, confFile+".tmp")
	if err := os.WriteFile(tmp, content, 0o600); err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	if err := u.chown(tmp); err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, confFile)); err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	return ensureInclude(filepath.Join(dir, "postgresql.conf"))
}

// ensureInclude appends the include directive to postgresql.conf once.
func ensureInclude(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == includeLine {
			return nil
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	_, err = fmt.Fprintf(f, "\n# Added by cqlpg: the settings it manages.\n%s\n", includeLine)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("localpg: %w", err)
	}
	return nil
}

// recordedPort returns the port written to cqlpg.conf by an earlier start,
// or 0.
func recordedPort(dir string) int {
	f, err := os.Open(filepath.Join(dir, confFile))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(name) == "port" {
			p, _ := strconv.Atoi(strings.Trim(strings.TrimSpace(value), "'"))
			return p
		}
	}
	return 0
}

// socketDirFor picks where the server puts its unix socket: the data directory
// itself, whose 0700 mode restricts who may connect, unless the socket path
// would exceed the kernel limit or the directory name holds a comma, which
// libpq and pgx would take as a host separator; then a per-cluster directory
// in the temp dir.
func socketDirFor(dataDir string) string {
	if len(dataDir)+len(socketName) <= maxSocketPath && !strings.Contains(dataDir, ",") {
		return dataDir
	}
	h := fnv.New64a()
	h.Write([]byte(dataDir))
	name := fmt.Sprintf("cqlpg-%016x", h.Sum64())
	if tmp := filepath.Join(os.TempDir(), name); len(tmp)+len(socketName) <= maxSocketPath {
		return tmp
	}
	return filepath.Join("/tmp", name)
}

// dsnQuote quotes a keyword/value connection string value when needed.
func dsnQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\r\n\\'") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
