package webui

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
)

// The web view at /ui on the HTTP port shows operators the live ring, where
// a key's replicas are and what each holds, how a table is laid out in
// Postgres on each shard, and what an outage or a new shard would do. Pages
// are rendered on the server as HTML with inline SVG and work without
// JavaScript: ranges are links, hovering shows their <title>, and every
// choice is a GET form. The view only reads; with authentication on it asks
// for the same credentials as CQL (HTTP basic authentication), and a page
// shows rows only to a role that may SELECT them.
//
// html/template escapes every name and value by the context it lands in
// (text, attribute, URL, SVG), so hostile keyspace, table and value names
// are shown, never interpreted.

//go:embed ui/*.html
var uiFiles embed.FS

// uiTemplates holds one template set per page, each with the shared
// layout, parsed once at start-up.
var uiTemplates = func() map[string]*template.Template {
	funcs := template.FuncMap{
		"percent": func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
		"add":     func(a, b int) int { return a + b },
		// mul2 scales a percentage to a 200-pixel bar.
		"mul2": func(f float64) float64 { return 2 * f },
		"legendOf": func(r uiRing, replicaShares bool) any {
			return struct {
				Ring          uiRing
				ReplicaShares bool
			}{r, replicaShares}
		},
	}
	pages := map[string]*template.Template{}
	for _, page := range []string{"ring", "key", "table", "whatif", "design", "advice"} {
		pages[page] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(uiFiles, "ui/layout.html", "ui/svg.html", "ui/"+page+".html"))
	}
	return pages
}()

// uiPage is what the shared layout shows around a page's own content.
type uiPage struct {
	Title string
	// Nav names the page, for the navigation to mark it.
	Nav  string
	Role string
	// Elapsed is the server time spent on the page before rendering.
	Elapsed time.Duration
	View    any
}

// Backend is what the view reads of the gateway: its shards, whether it
// is ready, its logins, and reads of one replica through its own path.
type Backend interface {
	// Cluster returns the gateway's shards, ring and schema.
	Cluster() *cluster.Cluster
	// Ready reports whether the shards are open.
	Ready() bool
	// Login checks the client's credentials as a CQL login does and
	// returns the role logged in as ("" without authentication); when ok
	// is false it has answered the request itself.
	Login(w http.ResponseWriter, r *http.Request) (role string, ok bool)
	// ReplicaRows runs a read of one partition, whose key values are key,
	// on one replica only, as role, planned and authorized as a client's
	// read would be.
	// The rows come as their columns' values, in the order cql selects
	// them.
	ReplicaRows(ctx context.Context, role, cql string, key [][]byte, shard int) ([][][]byte, error)
	// MaySelect reports whether role may read t's rows.
	MaySelect(role string, t *pgschema.Table) bool
	// RequestTimeout bounds each read a page makes; ReadTimeout is the
	// gateway's for reads, which a replica's read waits out.
	RequestTimeout() time.Duration
	ReadTimeout() time.Duration
	// Datacenter is the gateway's own datacenter.
	Datacenter() string
	// HotPartitions are the partitions the gateway's requests asked for
	// most, by sample.
	HotPartitions() []advise.HotPartition
	// FilterStats are the gateway's filtering and indexed queries.
	FilterStats() []advise.QueryStats
}

// View is the web view of one gateway.
type View struct {
	b   Backend
	log *slog.Logger
	// countLimits, when set, replaces defaultCountLimits, how the layout
	// page counts a table's rows (tests set it).
	countLimits atomic.Pointer[countLimits]
}

// New returns the web view of the gateway b; log takes the pages that
// fail.
func New(b Backend, log *slog.Logger) *View { return &View{b: b, log: log} }

// SetCountLimits makes the layout page count at most rows rows of a
// table on a shard, within timeout.
func (v *View) SetCountLimits(timeout time.Duration, rows int64) {
	v.countLimits.Store(&countLimits{timeout: timeout, rows: rows})
}

// uiRequest is one request to a page of the view: the role it is logged in
// as ("" without authentication) and the snapshots it reads.
type uiRequest struct {
	v      *View
	b      Backend
	r      *http.Request
	role   string
	schema *pgschema.Schema
}

// Route adds the view's pages to the HTTP mux.
func (s *View) Route(mux *http.ServeMux) {
	mux.Handle("GET /ui", s.uiHandler("ring", "Ring", (*uiRequest).ringView))
	mux.Handle("GET /ui/key", s.uiHandler("key", "Key placement", (*uiRequest).keyView))
	mux.Handle("GET /ui/table", s.uiHandler("table", "Table layout", (*uiRequest).tableView))
	mux.Handle("GET /ui/whatif", s.uiHandler("whatif", "What if", (*uiRequest).whatIfView))
	mux.Handle("GET /ui/design", s.uiHandler("design", "Table builder", (*uiRequest).designView))
	mux.Handle("GET /ui/advice", s.uiHandler("advice", "Advice", (*uiRequest).adviceView))
	mux.Handle("POST /ui/design", s.uiHandler("design", "Table builder", (*uiRequest).designView))
	mux.Handle("GET /ui/", http.RedirectHandler("/ui", http.StatusSeeOther))
}

// uiHandler serves one page: it logs the client in, builds the page's
// view and renders it into a buffer, so that a failing template never
// sends half a page.
func (s *View) uiHandler(page, title string, build func(*uiRequest) (any, error)) http.Handler {
	tmpl := uiTemplates[page]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Nothing on the pages runs script or loads anything from elsewhere.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !s.b.Ready() {
			// The shards may not be open yet.
			http.Error(w, "not ready: the gateway is starting", http.StatusServiceUnavailable)
			return
		}
		role, ok := s.b.Login(w, r)
		if !ok {
			return
		}
		start := time.Now()
		req := &uiRequest{v: s, b: s.b, r: r, role: role, schema: s.b.Cluster().Schema()}
		view, err := build(req)
		if err != nil {
			var bad *uiBadRequest
			if errors.As(err, &bad) {
				http.Error(w, bad.msg, http.StatusBadRequest)
				return
			}
			s.log.Error("web view page failed", "page", page, "err", err)
			http.Error(w, "the page could not be built; the gateway's log says why", http.StatusInternalServerError)
			return
		}
		var buf bytes.Buffer
		p := uiPage{Title: title, Nav: page, Role: role, Elapsed: time.Since(start).Round(time.Microsecond), View: view}
		if err := tmpl.Execute(&buf, p); err != nil {
			s.log.Error("web view page failed to render", "page", page, "err", err)
			http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Server-Timing", "build;dur="+strconv.FormatFloat(float64(time.Since(start).Microseconds())/1000, 'f', 3, 64))
		h.Set("Vary", "Accept-Encoding")
		if buf.Len() < uiCompressAbove || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Write(buf.Bytes())
			return
		}
		// A large ring's page is some 400 KiB of repetitive markup, which
		// compresses about tenfold.
		h.Set("Content-Encoding", "gzip")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		zw.Write(buf.Bytes())
		zw.Close()
	})
}

// uiCompressAbove is the page size from which pages are sent compressed
// to clients that accept gzip.
const uiCompressAbove = 8 << 10

// uiBadRequest is a request the view cannot answer as asked, such as a
// malformed form value; it is answered 400 with its message.
type uiBadRequest struct{ msg string }

func (e *uiBadRequest) Error() string { return e.msg }

// Unauthorized asks the browser for credentials, answering 401 with msg.
func Unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="cqlpg", charset="UTF-8"`)
	http.Error(w, msg, http.StatusUnauthorized)
}
