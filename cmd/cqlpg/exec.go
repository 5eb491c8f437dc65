package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/shell"
)

const execUsage = `Usage: cqlpg exec [flags] -e 'CQL' | -f FILE.cql

Runs CQL on a running gateway and prints the results as cqlsh does:
rows as a table with a "(N rows)" footer, DESCRIBE results as text.
-e runs one or more statements separated by semicolons and stops at the
first error (exit status 2); -f runs a file's statements, printing each
error as it comes and going on, and exits with status 2 if any failed.

Flags:
`

func execCQL(args []string) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), execUsage); fs.PrintDefaults() }
	host := fs.String("host", "127.0.0.1:9042", "`HOST:PORT` of the gateway")
	user := fs.String("u", "", "user `name`, when the gateway requires authentication")
	fs.StringVar(user, "username", "", "same as -u")
	pass := fs.String("p", "", "`password` of the user")
	fs.StringVar(pass, "password", "", "same as -p")
	keyspace := fs.String("k", "", "`keyspace` to start in")
	fs.StringVar(keyspace, "keyspace", "", "same as -k")
	stmt := fs.String("e", "", "`CQL` to run")
	fs.StringVar(stmt, "execute", "", "same as -e")
	file := fs.String("f", "", "`file` of CQL statements to run")
	fs.StringVar(file, "file", "", "same as -f")
	timeout := fs.Duration("timeout", 10*time.Second, "time a request has to answer")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(positional) > 0 || (*stmt == "") == (*file == "") {
		fs.Usage()
		return 2
	}
	source, script := "<stdin>", *stmt
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg exec:", err)
			return 2
		}
		source, script = *file, string(b)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	sh, err := shell.Connect(shell.Options{Host: *host, Username: *user, Password: *pass, Keyspace: *keyspace, Timeout: *timeout}, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Connection error: could not connect to %s: %v\n", *host, err)
		return 1
	}
	defer sh.Close()
	failed := false
	for _, st := range shell.Split(script) {
		if err := sh.Run(ctx, st.Text); err != nil {
			fmt.Fprintf(os.Stderr, "%s:%d:%s\n", source, st.Line, shell.FormatError(err))
			failed = true
			if *file == "" || ctx.Err() != nil {
				break
			}
		}
	}
	if failed {
		return 2
	}
	return 0
}
