package gateway_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// browserPage is a page for testdata/node/browse.js to load, and what to
// do and read there. Each page gets a browser context of its own: no
// cookie or credential of one page reaches the next.
type browserPage struct {
	URL string `json:"url"`
	// JavaScriptEnabled runs the page's scripts; without it the page is
	// what a browser with JavaScript turned off shows.
	JavaScriptEnabled bool `json:"javaScriptEnabled"`
	// Username and Password answer an HTTP authentication challenge; with
	// no username the browser answers none and the page is the 401.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// Screenshot is the absolute path of a PNG of the whole page to
	// write, or empty for none.
	Screenshot string `json:"screenshot,omitempty"`
	// Width and Height are the viewport's, 1400 by 1000 if zero.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Click and Hover are CSS selectors of an element to click, then one
	// to hover, before anything is read.
	Click string `json:"click,omitempty"`
	Hover string `json:"hover,omitempty"`
	// Extract maps a name to a CSS selector whose matches' text to read.
	Extract map[string]string `json:"extract,omitempty"`
	// Attrs maps a name to an attribute to read of a selector's matches.
	Attrs map[string]browserAttr `json:"attrs,omitempty"`
}

// browserAttr names an attribute of the elements a CSS selector matches.
type browserAttr struct {
	Selector  string `json:"selector"`
	Attribute string `json:"attribute"`
}

// browserResult is what testdata/node/browse.js read of a browserPage.
type browserResult struct {
	// Status is the HTTP status of the response that loaded the page: the
	// URL's, or the one a click navigated to.
	Status int    `json:"status"`
	Title  string `json:"title"`
	// Extract holds, under each name of the page's Extract, the trimmed
	// text content of each match, in document order.
	Extract map[string][]string `json:"extract"`
	// Attrs holds, under each name of the page's Attrs, the attribute of
	// each match in document order; empty where a match lacks it.
	Attrs map[string][]string `json:"attrs"`
	// ConsoleErrors are the console.error messages, the browser's own
	// (a failed subresource, a blocked script) and uncaught exceptions of
	// the whole visit, of a page a click left too.
	ConsoleErrors []string `json:"consoleErrors"`
	// Screenshot is the path the screenshot was written to, if any.
	Screenshot string `json:"screenshot"`
	// Error is why the page could not be loaded or read; what was read
	// before it is still there.
	Error string `json:"error"`
}

// browserReport is what testdata/node/browse.js prints.
type browserReport struct {
	Version string          `json:"version"`
	Pages   []browserResult `json:"pages"`
}

// chromium is the path of the browser the tests drive, found or
// installed once per test binary.
var chromium = sync.OnceValues(func() (string, error) {
	if path, err := osexec.LookPath("chromium"); err == nil {
		return path, nil
	}
	if err := installChromium(); err != nil {
		return "", err
	}
	path, err := osexec.LookPath("chromium")
	if err != nil {
		// Debian's package puts it in /usr/bin, which a test's PATH may
		// lack.
		if _, serr := os.Stat("/usr/bin/chromium"); serr != nil {
			return "", fmt.Errorf("chromium installed but not found: %v", err)
		}
		path = "/usr/bin/chromium"
	}
	return path, nil
})

// chromiumInstallTime is how long installChromium took, if this test
// binary ran it, for the first test that calls ensureChromium to log once.
var (
	chromiumInstallTime time.Duration
	chromiumLogged      sync.Once
)

// installChromium installs Debian's chromium package (aptInstall).
func installChromium() error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := aptInstall(ctx, "chromium"); err != nil {
		return fmt.Errorf("the browser tests drive Debian's chromium: %w", err)
	}
	chromiumInstallTime = time.Since(start)
	return nil
}

// ensureChromium returns the path of the Chromium executable the browser
// tests drive, installing Debian's package if none is on PATH. A browser
// that cannot be had fails the test: skipping would let the UI go
// untested without anyone noticing.
func ensureChromium(t testing.TB) string {
	t.Helper()
	path, err := chromium()
	if err != nil {
		t.Fatal(err)
	}
	chromiumLogged.Do(func() {
		if chromiumInstallTime > 0 {
			t.Logf("installed Debian's chromium in %s", chromiumInstallTime.Round(time.Second))
		}
	})
	return path
}

// browse loads pages in headless Chromium with testdata/node/browse.js
// and returns what it read of each, in order. A page that failed has its
// Error set; a browser or script that fails as a whole fails the test.
func browse(t testing.TB, pages []browserPage) []browserResult {
	t.Helper()
	exe := ensureChromium(t)
	modules, err := installNodeDriver()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(struct {
		Executable string        `json:"executable"`
		Pages      []browserPage `json:"pages"`
	}{exe, pages})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := osexec.CommandContext(ctx, "node", filepath.Join(nodeDir, "browse.js"))
	// The script requires playwright-core from the cached install, not
	// from a node_modules in the checkout.
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = bytes.NewReader(spec)
	// On a timeout, SIGTERM lets playwright-core close the browser it
	// started; SIGKILL would leave Chromium running.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("browse.js: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var r browserReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("browse.js printed no report: %v\n%s", err, stdout.String())
	}
	if len(r.Pages) != len(pages) {
		t.Fatalf("browse.js reported %d pages of %d", len(r.Pages), len(pages))
	}
	t.Logf("browsed %d pages with Chromium %s in %s", len(pages), r.Version, time.Since(start).Round(time.Millisecond))
	return r.Pages
}

// harnessHome is the page TestBrowserHarness reads: an inline SVG whose
// <title> must not become the document's, text a script replaces, a
// button whose handler changes text, and a page taller than the viewport
// for the full-page screenshot to cover.
const harnessHome = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cqlpg harness</title>
<style>
#heading:hover { color: #c00; }
#tall { height: 2400px; background: linear-gradient(#eef, #fee); }
</style>
</head>
<body>
<svg id="logo" width="64" height="64" viewBox="0 0 64 64" role="img">
<title>cqlpg logo</title>
<circle cx="32" cy="32" r="28" fill="#336"/>
</svg>
<h1 id="heading">Gateway</h1>
<ul id="shards"><li>shard 0</li><li>
  shard 1
</li></ul>
<p id="script">without JavaScript</p>
<p id="clicked">not clicked</p>
<button id="toggle" onclick="document.getElementById('clicked').textContent = 'clicked'">Toggle</button>
<a id="admin" href="/admin">Admin</a>
<div id="tall"></div>
<script>
document.getElementById('script').textContent = 'with JavaScript';
console.error('harness console error');
</script>
</body>
</html>
`

// harnessAdmin is the page behind HTTP basic authentication.
const harnessAdmin = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cqlpg admin</title></head>
<body><p id="who">signed in as cassandra</p></body></html>
`

// TestBrowserHarness checks the browser harness itself on a small site of
// its own, so that a failing UI test points at the UI, not at the harness:
// texts read with and without JavaScript, a click and a hover, HTTP basic
// authentication, console errors, a page that cannot load, and full-page
// screenshots.
func TestBrowserHarness(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, harnessHome)
	})
	mux.HandleFunc("GET /admin", func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "cassandra" || pass != "cassandra" {
			w.Header().Set("WWW-Authenticate", `Basic realm="cqlpg"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, harnessAdmin)
	})
	// Browsers ask for a favicon; a 404 would be a console error of every
	// page.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A port nothing listens on, for a page that cannot load.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()

	dir := t.ArtifactDir()
	shot := func(name string) string { return filepath.Join(dir, name+".png") }
	home := map[string]string{
		"heading": "#heading",
		"shards":  "#shards li",
		"svg":     "#logo title",
		"script":  "#script",
		"clicked": "#clicked",
		"hovered": "#heading:hover",
		"missing": "#nothing-here",
	}
	pages := []browserPage{
		{URL: srv.URL + "/", JavaScriptEnabled: true, Screenshot: shot("home-js"),
			Click: "#toggle", Hover: "#heading", Extract: home,
			Attrs: map[string]browserAttr{
				"href":  {"#admin", "href"},
				"label": {"#logo, #heading", "role"},
			}},
		{URL: srv.URL + "/", JavaScriptEnabled: false, Screenshot: shot("home-nojs"),
			Click: "#toggle", Extract: home, Width: 800, Height: 600},
		{URL: srv.URL + "/admin", JavaScriptEnabled: true, Extract: map[string]string{"who": "#who"}},
		{URL: srv.URL + "/admin", JavaScriptEnabled: true, Username: "cassandra", Password: "wrong"},
		{URL: srv.URL + "/admin", JavaScriptEnabled: false, Username: "cassandra", Password: "cassandra",
			Screenshot: shot("admin"), Extract: map[string]string{"who": "#who"}},
		{URL: closed, JavaScriptEnabled: true},
		// A link followed by a click reports the page it leads to.
		{URL: srv.URL + "/", JavaScriptEnabled: true, Username: "cassandra", Password: "cassandra",
			Click: "#admin", Extract: map[string]string{"who": "#who"}},
	}
	got := browse(t, pages)

	type want struct {
		status        int
		title         string
		extract       map[string][]string
		attrs         map[string][]string
		consoleErrors []string
	}
	wants := []want{
		{200, "cqlpg harness", map[string][]string{
			"heading": {"Gateway"}, "shards": {"shard 0", "shard 1"}, "svg": {"cqlpg logo"},
			"script": {"with JavaScript"}, "clicked": {"clicked"}, "hovered": {"Gateway"}, "missing": {},
		}, map[string][]string{
			"href": {"/admin"}, "label": {"img", ""},
		}, []string{"harness console error"}},
		// Without JavaScript the script and the click handler do not run.
		{200, "cqlpg harness", map[string][]string{
			"heading": {"Gateway"}, "shards": {"shard 0", "shard 1"}, "svg": {"cqlpg logo"},
			"script": {"without JavaScript"}, "clicked": {"not clicked"}, "hovered": {}, "missing": {},
		}, map[string][]string{}, []string{}},
		// Without credentials the browser shows the 401's body.
		{401, "", map[string][]string{"who": {}}, map[string][]string{}, nil},
		{401, "", map[string][]string{}, map[string][]string{}, nil},
		{200, "cqlpg admin", map[string][]string{"who": {"signed in as cassandra"}}, map[string][]string{}, []string{}},
		{},
		// The console errors are the whole visit's, the home page's too.
		{200, "cqlpg admin", map[string][]string{"who": {"signed in as cassandra"}}, map[string][]string{},
			[]string{"harness console error"}},
	}
	for i, w := range wants {
		p, g := pages[i], got[i]
		what := fmt.Sprintf("page %d (%s, JavaScript %v, user %q)", i, p.URL, p.JavaScriptEnabled, p.Username)
		if p.URL == closed {
			if g.Error == "" || g.Status != 0 {
				t.Errorf("%s: status %d, error %q; want no status and an error", what, g.Status, g.Error)
			}
			continue
		}
		if g.Error != "" {
			t.Errorf("%s: %s", what, g.Error)
			continue
		}
		if g.Status != w.status || g.Title != w.title {
			t.Errorf("%s: status %d, title %q; want %d, %q", what, g.Status, g.Title, w.status, w.title)
		}
		if !reflect.DeepEqual(g.Extract, w.extract) {
			t.Errorf("%s: extracted %s, want %s", what, asJSON(g.Extract), asJSON(w.extract))
		}
		if !reflect.DeepEqual(g.Attrs, w.attrs) {
			t.Errorf("%s: attributes %s, want %s", what, asJSON(g.Attrs), asJSON(w.attrs))
		}
		// The 401 pages' console errors are the browser's, in its words:
		// only that there are some is checked.
		if w.status == http.StatusUnauthorized {
			if len(g.ConsoleErrors) == 0 {
				t.Errorf("%s: no console error for the 401", what)
			}
		} else if !reflect.DeepEqual(g.ConsoleErrors, w.consoleErrors) {
			t.Errorf("%s: console errors %q, want %q", what, g.ConsoleErrors, w.consoleErrors)
		}
		if p.Screenshot == "" {
			if g.Screenshot != "" {
				t.Errorf("%s: screenshot %s taken unasked", what, g.Screenshot)
			}
			continue
		}
		checkScreenshot(t, what, p, g)
	}
}

// checkScreenshot checks that a page's screenshot is a PNG as wide as the
// viewport and at least as tall as the page, the whole page rather than
// the viewport's part of it.
func checkScreenshot(t *testing.T, what string, p browserPage, g browserResult) {
	t.Helper()
	if g.Screenshot != p.Screenshot {
		t.Errorf("%s: screenshot at %q, want %q", what, g.Screenshot, p.Screenshot)
		return
	}
	b, err := os.ReadFile(g.Screenshot)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s: %s is no PNG: it starts %q", what, g.Screenshot, b[:min(len(b), 8)])
		return
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %s: %v", what, g.Screenshot, err)
		return
	}
	width, minHeight := cmp.Or(p.Width, 1400), cmp.Or(p.Height, 1000)
	if !strings.HasSuffix(p.URL, "/admin") {
		// The home page is taller than any viewport here.
		minHeight = 2400
	}
	if cfg.Width != width || cfg.Height < minHeight {
		t.Errorf("%s: screenshot %dx%d, want %d wide and at least %d high", what, cfg.Width, cfg.Height, width, minHeight)
	}
	t.Logf("%s: screenshot %s (%dx%d, %d bytes)", what, g.Screenshot, cfg.Width, cfg.Height, len(b))
}
