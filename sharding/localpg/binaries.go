package localpg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// EnvBin names the environment variable that points at a directory holding
// the PostgreSQL server binaries.
const EnvBin = "CQLPG_PG_BIN"

// Binaries holds the absolute paths of the PostgreSQL programs localpg runs.
type Binaries struct {
	Dir      string // directory holding the programs
	Initdb   string
	PgCtl    string
	Postgres string
	Psql     string // empty when psql is not installed next to the server
	Major    int    // major version reported by postgres --version, e.g. 15
}

// searchGlobs lists the distribution layouts tried after PATH; within one
// pattern the highest version wins.
var searchGlobs = []string{
	"/usr/lib/postgresql/*/bin", // Debian, Ubuntu
	"/usr/pgsql-*/bin",          // PGDG RPMs
}

// FindBinaries locates initdb, pg_ctl and postgres: in dir if it is not
// empty, else in $CQLPG_PG_BIN, else on PATH, else in the highest-versioned
// /usr/lib/postgresql/*/bin. An explicitly named directory that lacks a
// program is an error rather than a reason to look elsewhere, so that a typo
// never silently selects another PostgreSQL version.
func FindBinaries(dir string) (Binaries, error) {
	if dir != "" {
		return binariesIn(dir, "the given directory")
	}
	if env := os.Getenv(EnvBin); env != "" {
		return binariesIn(env, "$"+EnvBin)
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			p = resolved
		}
		if b, err := binariesIn(filepath.Dir(p), "PATH"); err == nil {
			return b, nil
		}
	}
	for _, pattern := range searchGlobs {
		dirs, _ := filepath.Glob(pattern)
		slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
		for _, d := range dirs {
			if b, err := binariesIn(d, pattern); err == nil {
				return b, nil
			}
		}
	}
	return Binaries{}, fmt.Errorf("localpg: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found "+
		"on PATH or in %v: install the PostgreSQL server package or set $%s to its bin directory",
		searchGlobs, EnvBin)
}

// binariesIn checks that dir holds the server programs; source names where
// dir came from for the error message.
func binariesIn(dir, source string) (Binaries, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Binaries{}, fmt.Errorf("localpg: PostgreSQL binaries from %s: %w", source, err)
	}
	b := Binaries{
		Dir:      dir,
		Initdb:   filepath.Join(dir, "initdb"),
		PgCtl:    filepath.Join(dir, "pg_ctl"),
		Postgres: filepath.Join(dir, "postgres"),
	}
	for _, p := range []string{b.Initdb, b.PgCtl, b.Postgres} {
		if err := isExecutable(p); err != nil {
			return Binaries{}, fmt.Errorf("localpg: PostgreSQL binaries from %s: %w", source, err)
		}
	}
	if psql := filepath.Join(dir, "psql"); isExecutable(psql) == nil {
		b.Psql = psql
	}
	if b.Major, err = serverMajor(b.Postgres); err != nil {
		return Binaries{}, err
	}
	return b, nil
}

func isExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// serverMajor runs `postgres --version`, which PostgreSQL allows even as root.
func serverMajor(postgres string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, postgres, "--version").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("localpg: %s --version: %w: %s", postgres, err, bytes.TrimSpace(out))
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return 0, errors.New("localpg: cannot parse the output of " + postgres + " --version: " + string(bytes.TrimSpace(out)))
	}
	return strconv.Atoi(string(m[1]))
}

// versionOf extracts the version number from a directory such as
// /usr/lib/postgresql/15/bin or /usr/pgsql-16/bin; unknown layouts sort last.
func versionOf(dir string) int {
	name := filepath.Base(filepath.Dir(dir))
	for i := len(name); i > 0; i-- {
		if name[i-1] < '0' || name[i-1] > '9' {
			name = name[i:]
			break
		}
	}
	v, err := strconv.Atoi(name)
	if err != nil {
		return -1
	}
	return v
}
