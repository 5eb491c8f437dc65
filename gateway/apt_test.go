package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"time"
)

// aptInstall installs Debian packages with apt-get, as the tests do for
// what they drive (the Python driver, Chromium) on a fresh machine, where
// they run as root. Installing from the package lists there are is tried
// first; when that fails, the lists are updated and the install tried
// again. A fresh machine's own package jobs may hold the dpkg or apt lock
// for a while: a command that finds it held is retried after a pause.
func aptInstall(ctx context.Context, packages ...string) error {
	if _, err := osexec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("installing %s needs apt-get: %w", strings.Join(packages, ", "), err)
	}
	install := append([]string{"install", "-y", "--no-install-recommends"}, packages...)
	if _, err := aptGet(ctx, install...); err == nil {
		return nil
	}
	if out, err := aptGet(ctx, "update"); err != nil {
		return fmt.Errorf("apt-get update: %v\n%s", err, out)
	}
	if out, err := aptGet(ctx, install...); err != nil {
		return fmt.Errorf("apt-get install %s: %v\n%s", strings.Join(packages, " "), err, out)
	}
	return nil
}

// aptGet runs apt-get with args, again after a pause while the dpkg or
// apt lock is held, up to 8 times.
func aptGet(ctx context.Context, args ...string) ([]byte, error) {
	for attempt := 1; ; attempt++ {
		cmd := osexec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		locked := bytes.Contains(out, []byte("Could not get lock")) || bytes.Contains(out, []byte("dpkg frontend lock"))
		if err == nil || !locked || attempt == 8 {
			return out, err
		}
		select {
		case <-time.After(15 * time.Second):
		case <-ctx.Done():
			return out, err
		}
	}
}
