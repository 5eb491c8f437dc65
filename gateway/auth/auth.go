package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/pgschema"
)

// Config turns on authentication and authorization as a Cassandra 4.1
// node does them with PasswordAuthenticator and CassandraAuthorizer:
// clients log in with a role's name and password (SASL PLAIN), and each
// statement needs a permission of the role on what it touches. Roles and
// permissions live in the shards' catalog, so every gateway on the same
// shards knows them.
type Config struct {
	// Enabled turns authentication and authorization on.
	Enabled bool
	// SuperuserPassword is the password of the default superuser,
	// cassandra, which the first gateway with authentication on creates
	// when the shards hold no role yet. Empty, the password is random and
	// logged once, when the role is created.
	SuperuserPassword string
	// CredentialsValidity is how long a verified login is remembered, and
	// PermissionsValidity how long a role's permissions are, before the
	// shards are asked again: Cassandra's credentials_validity and
	// permissions_validity, 2 s by default. Role and permission changes
	// made through a gateway apply on it at once, and on the others within
	// these times.
	CredentialsValidity time.Duration
	PermissionsValidity time.Duration
	// MaxFailedLogins is how many failed logins a client address may make
	// within FailedLoginWindow; past them, its logins are refused without
	// their password being checked until the window ends, which bounds
	// the passwords a client can try. 10 a minute by default; negative
	// turns the limit off.
	MaxFailedLogins   int
	FailedLoginWindow time.Duration
	// PasswordCost is bcrypt's cost for the passwords CREATE and ALTER
	// ROLE set: DefaultPasswordCost (10) unless given.
	PasswordCost int
}

func (c *Config) SetDefaults() {
	if c.CredentialsValidity <= 0 {
		c.CredentialsValidity = 2 * time.Second
	}
	if c.PermissionsValidity <= 0 {
		c.PermissionsValidity = 2 * time.Second
	}
	if c.MaxFailedLogins == 0 {
		c.MaxFailedLogins = 10
	}
	if c.FailedLoginWindow <= 0 {
		c.FailedLoginWindow = time.Minute
	}
	if c.PasswordCost == 0 {
		c.PasswordCost = DefaultPasswordCost
	}
}

const (
	// passwordAuthenticator is the authenticator AUTHENTICATE names;
	// drivers check the name before they send credentials.
	passwordAuthenticator = "org.apache.cassandra.auth.PasswordAuthenticator"
	// defaultSuperuser is the role created on shards without roles.
	defaultSuperuser = "cassandra"
)

// Error is a login refused (CQL Bad_credentials, 0x0100),
// with Cassandra's text.
type Error struct {
	msg string
	// BadCredentials is set when the role and password did not match, as
	// opposed to the check failing: such logins count as failures.
	// Throttled is set when the password was not checked, as the client's
	// host failed too many times.
	BadCredentials, Throttled bool
}

func (e *Error) Error() string { return e.msg }

// Authenticator logs clients in and authorizes their statements. It
// exists only when authentication is on; its methods that the request
// path calls accept a nil receiver, which allows everything.
type Authenticator struct {
	cluster        *cluster.Cluster
	log            *slog.Logger
	requestTimeout time.Duration
	cfg            Config
	// sessions maps each connection that sent STARTUP to its session.
	sessions sync.Map // *conn → *authSession
	// macKey keys the digests of remembered passwords, so that the
	// auth's memory holds no password and no unsalted hash of one.
	macKey [32]byte
	credMu sync.Mutex
	creds  map[string]credential
	// checking holds the logins being checked, by role and digest, so
	// that a driver opening its connections at once pays for one bcrypt.
	checking map[string]*loginCheck
	// access caches each role's roles and permissions (access.go).
	access sync.Map // role name → *accessEntry
	// generation changes with every role or permission change made
	// through this gateway, which invalidates every cached access.
	generation atomic.Uint64
	// failed counts the failed logins of each client address.
	failMu sync.Mutex
	failed map[string]*loginFailures
}

// loginFailures counts a client address's failed logins in the window
// that started with the first of them.
type loginFailures struct {
	count int
	since time.Time
}

// authSession is a connection's login: role is empty until AUTH_RESPONSE
// succeeds; access is then the role's entry in the access cache.
type authSession struct {
	role   string
	access *accessEntry
}

// credential is a verified login: a digest of the password that was
// checked, and until when it is trusted without asking the shards.
type credential struct {
	mac     [32]byte
	expires time.Time
}

// loginCheck is a login being checked; done closes when err is set.
type loginCheck struct {
	done chan struct{}
	err  error
}

// New creates the default superuser on shards without roles.
// requestTimeout bounds the catalog reads of a request's permission
// check.
func New(ctx context.Context, cfg Config, cl *cluster.Cluster, requestTimeout time.Duration, log *slog.Logger) (*Authenticator, error) {
	cfg.SetDefaults()
	if _, err := HashPassword("", cfg.PasswordCost); err != nil {
		return nil, err
	}
	a := &Authenticator{cluster: cl, log: log, requestTimeout: requestTimeout, cfg: cfg,
		creds: map[string]credential{}, checking: map[string]*loginCheck{}, failed: map[string]*loginFailures{}}
	if _, err := rand.Read(a.macKey[:]); err != nil {
		return nil, err
	}
	if err := a.createSuperuser(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// createSuperuser creates the default superuser if the shards hold no
// role, as Cassandra does on a new cluster, but with the configured or a
// random password rather than a well-known one. The first shard decides:
// of several gateways starting at once, the one whose role lands there
// copies its hash to the others and is the one that logs the password.
func (a *Authenticator) createSuperuser(ctx context.Context) error {
	control := a.cluster.Control()
	password, generated := a.cfg.SuperuserPassword, false
	exists, err := pgschema.HasRoles(ctx, control[0])
	if err != nil {
		return err
	}
	if exists {
		if password != "" {
			a.log.Info("roles exist already: the configured superuser password is not applied")
		}
		return nil
	}
	if password == "" {
		var b [18]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		password, generated = base64.RawURLEncoding.EncodeToString(b[:]), true
	}
	hash, err := a.HashPassword(password)
	if err != nil {
		return err
	}
	// Another gateway may have created roles since: the first shard's
	// transaction settles it.
	role := &pgschema.Role{Name: defaultSuperuser, Super: true, Login: true}
	created := false
	for i, pool := range control {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if err := pgschema.LockRoles(ctx, tx); err != nil {
				return err
			}
			ok, err := pgschema.CreateFirstRole(ctx, tx, role, hash)
			if i == 0 {
				created = ok
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("default superuser on shard %d: %w", i, err)
		}
		if !created {
			break
		}
	}
	switch {
	case created && generated:
		a.log.Warn("created the default superuser with a random password, shown only this once; "+
			"log in with it and change it with ALTER ROLE", "role", defaultSuperuser, "password", password)
	case created:
		a.log.Info("created the default superuser with the configured password", "role", defaultSuperuser)
	}
	return nil
}

// Challenge answers STARTUP with AUTHENTICATE: the connection must log in
// before anything else.
func (a *Authenticator) Challenge(c any, resp *[]byte) error {
	a.sessions.Store(c, &authSession{})
	(*resp)[4] = cqlwire.OpAuthenticate
	*resp = cqlwire.AppendString(*resp, passwordAuthenticator)
	return nil
}

// Admit refuses a request that the connection's state does not allow,
// as Cassandra does: until its login succeeds a connection may only send
// AUTH_RESPONSE, and once logged in it may not start again.
func (a *Authenticator) Admit(c any, op byte) error {
	if a == nil {
		return nil
	}
	v, ok := a.sessions.Load(c)
	if !ok {
		return nil // before STARTUP, which dispatch checks
	}
	loggedIn := v.(*authSession).role != ""
	switch {
	case !loggedIn && op != cqlwire.OpAuthResponse:
		return &cqlwire.ProtocolError{Msg: fmt.Sprintf("Unexpected message %s, expecting SASL_RESPONSE", cqlwire.OpNames[op])}
	case loggedIn && op == cqlwire.OpStartup:
		return &cqlwire.ProtocolError{Msg: "Unexpected message STARTUP, the connection is already initialized"}
	}
	return nil
}

// Respond handles AUTH_RESPONSE, from a connection whose client is at
// remote: SASL PLAIN credentials, checked against the roles. Success
// answers AUTH_SUCCESS; failure leaves the connection waiting for another
// try.
func (a *Authenticator) Respond(ctx context.Context, c any, remote net.Addr, d *cqlwire.Decoder, resp *[]byte) error {
	token, _ := d.Value()
	if err := cqlwire.DecodeError(d, "AUTH_RESPONSE"); err != nil {
		return err
	}
	user, password, err := SASLPlain(token)
	if err != nil {
		return err
	}
	if err := a.Login(ctx, clientHost(remote.String()), user, password); err != nil {
		return err
	}
	a.Attach(c, user)
	(*resp)[4] = cqlwire.OpAuthSuccess
	*resp = cqlwire.AppendBytes(*resp, nil)
	return nil
}

// SASLPlain decodes SASL PLAIN's [authzid] NUL authcid NUL password as
// Cassandra does, from the end, ignoring the authorization id.
func SASLPlain(token []byte) (user, password string, err error) {
	var parts [][]byte
	end := len(token)
	for i := len(token) - 1; i >= 0; i-- {
		if token[i] != 0 {
			continue
		}
		if len(parts) == 2 {
			return "", "", &Error{msg: `Credential format error: username or password is empty or contains NUL(\0) character`}
		}
		parts = append(parts, token[i+1:end])
		end = i
	}
	if len(parts) < 1 || len(parts[0]) == 0 {
		return "", "", &Error{msg: "Password must not be null"}
	}
	if len(parts) < 2 || len(parts[1]) == 0 {
		return "", "", &Error{msg: "Authentication ID must not be null"}
	}
	return string(parts[1]), string(parts[0]), nil
}

// login checks a role's password, from the remembered logins when it was
// verified recently: a login then costs no bcrypt and no round trip.
// Logins of the same role and password that arrive while one is checked
// wait for its answer.
func (a *Authenticator) login(ctx context.Context, user, password string) error {
	mac := a.digest(user, password)
	now := time.Now()
	key := user + "\x00" + string(mac[:])
	a.credMu.Lock()
	cred, ok := a.creds[user]
	if ok && now.Before(cred.expires) && hmac.Equal(cred.mac[:], mac[:]) {
		a.credMu.Unlock()
		return nil
	}
	if c, ok := a.checking[key]; ok {
		a.credMu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return &Error{msg: "Unable to perform authentication: " + ctx.Err().Error()}
		}
	}
	c := &loginCheck{done: make(chan struct{})}
	a.checking[key] = c
	a.credMu.Unlock()

	c.err = a.checkLogin(ctx, user, password)
	a.credMu.Lock()
	delete(a.checking, key)
	if c.err == nil {
		a.creds[user] = credential{mac: mac, expires: now.Add(a.cfg.CredentialsValidity)}
	}
	a.credMu.Unlock()
	close(c.done)
	return c.err
}

// checkLogin checks a role's password against the hash the shards hold.
func (a *Authenticator) checkLogin(ctx context.Context, user, password string) error {
	var hash string
	var found, canLogin bool
	err := a.Read(ctx, func(q pgschema.Querier) error {
		var err error
		hash, canLogin, found, err = pgschema.LoginHash(ctx, q, user)
		return err
	})
	if err != nil {
		a.log.Error("cannot check a login", "role", user, "err", err)
		return &Error{msg: "Unable to perform authentication: no shard could check the credentials"}
	}
	if !found || !PasswordMatches(hash, password) {
		return &Error{msg: fmt.Sprintf("Provided username %s and/or password are incorrect", user), BadCredentials: true}
	}
	if !canLogin {
		return &Error{msg: fmt.Sprintf("%s is not permitted to log in", user), BadCredentials: true}
	}
	return nil
}

// HashPassword hashes a password that CREATE or ALTER ROLE sets, at the
// configured cost; without authentication (a nil receiver), at the
// default cost.
func (a *Authenticator) HashPassword(password string) (string, error) {
	cost := DefaultPasswordCost
	if a != nil {
		cost = a.cfg.PasswordCost
	}
	return HashPassword(password, cost)
}

// Login checks a role's password for a client at host, by the same rules
// on every way in: a host that failed too many times is refused before
// the password is checked, and each failure or success is counted.
func (a *Authenticator) Login(ctx context.Context, host, user, password string) error {
	if err := a.throttled(host, user); err != nil {
		return err
	}
	if err := a.login(ctx, user, password); err != nil {
		var refused *Error
		if errors.As(err, &refused) && refused.BadCredentials {
			a.loginFailed(host, user)
		}
		return err
	}
	a.loginSucceeded(host)
	return nil
}

// Attach makes c a session logged in as role, which Forget ends: a
// client connection after its login, or the web view's reads on a
// logged-in user's behalf.
func (a *Authenticator) Attach(c any, role string) {
	a.sessions.Store(c, &authSession{role: role, access: a.entry(role)})
}

// clientHost is an address without its port: failed logins are counted
// by host, as a client opens connections from many ports.
func clientHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// throttled refuses a login from an address that failed too many times
// in the current window, before its password is checked.
func (a *Authenticator) throttled(addr, user string) error {
	if a.cfg.MaxFailedLogins < 0 {
		return nil
	}
	a.failMu.Lock()
	defer a.failMu.Unlock()
	f, ok := a.failed[addr]
	if !ok || f.count < a.cfg.MaxFailedLogins {
		return nil
	}
	if wait := time.Until(f.since.Add(a.cfg.FailedLoginWindow)); wait > 0 {
		return &Error{msg: fmt.Sprintf("Unable to perform authentication for %s: too many failed login attempts from %s, try again in %s",
			user, addr, wait.Round(time.Second)), Throttled: true}
	}
	delete(a.failed, addr)
	return nil
}

// loginFailed counts a failed login from an address.
func (a *Authenticator) loginFailed(addr, user string) {
	if a.cfg.MaxFailedLogins < 0 {
		return
	}
	now := time.Now()
	a.failMu.Lock()
	defer a.failMu.Unlock()
	f, ok := a.failed[addr]
	if !ok || now.Sub(f.since) >= a.cfg.FailedLoginWindow {
		if len(a.failed) >= maxTrackedAddrs {
			a.pruneFailures(now)
		}
		f = &loginFailures{since: now}
		a.failed[addr] = f
	}
	f.count++
	if f.count == a.cfg.MaxFailedLogins {
		a.log.Warn("too many failed logins: refusing logins from the address for a while", "addr", addr,
			"role", user, "failures", f.count, "for", time.Until(f.since.Add(a.cfg.FailedLoginWindow)).Round(time.Second))
	}
}

// maxTrackedAddrs bounds the addresses whose failures are counted before
// those whose window ended are forgotten.
const maxTrackedAddrs = 4096

// pruneFailures forgets the addresses whose window ended.
func (a *Authenticator) pruneFailures(now time.Time) {
	for addr, f := range a.failed {
		if now.Sub(f.since) >= a.cfg.FailedLoginWindow {
			delete(a.failed, addr)
		}
	}
}

// loginSucceeded forgets an address's failed logins.
func (a *Authenticator) loginSucceeded(addr string) {
	if a.cfg.MaxFailedLogins < 0 {
		return
	}
	a.failMu.Lock()
	delete(a.failed, addr)
	a.failMu.Unlock()
}

// digest is a keyed digest of a role's name and password.
func (a *Authenticator) digest(user, password string) [32]byte {
	h := hmac.New(sha256.New, a.macKey[:])
	h.Write([]byte(user))
	h.Write([]byte{0})
	h.Write([]byte(password))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// ForgetLogins drops the remembered logins of roles whose password or
// login changed through this gateway.
func (a *Authenticator) ForgetLogins(roles ...string) {
	a.credMu.Lock()
	for _, r := range roles {
		delete(a.creds, r)
	}
	a.credMu.Unlock()
}

// Forget drops a closed connection's session.
func (a *Authenticator) Forget(c any) {
	if a != nil {
		a.sessions.Delete(c)
	}
}

// RoleOf returns the role a connection logged in as, or "" without
// authentication.
func (a *Authenticator) RoleOf(c any) string {
	if a == nil {
		return ""
	}
	if v, ok := a.sessions.Load(c); ok {
		return v.(*authSession).role
	}
	return ""
}

// Read runs f on the first shard that answers, as schema reads do: every
// shard holds the roles.
func (a *Authenticator) Read(ctx context.Context, f func(q pgschema.Querier) error) error {
	return a.cluster.ReadCatalog(ctx, f)
}

// Apply runs a role or permission change on every shard, each in a
// transaction holding the shard's role lock, and then drops what this
// auth cached of roles.
func (a *Authenticator) Apply(ctx context.Context, f func(ctx context.Context, tx pgx.Tx) error) error {
	defer a.Changed()
	return a.cluster.OnEveryShard(ctx, func(ctx context.Context, tx pgx.Tx) error {
		if err := pgschema.LockRoles(ctx, tx); err != nil {
			return err
		}
		return f(ctx, tx)
	})
}

// Changed invalidates every cached access after a change of roles,
// permissions or the objects they are on.
func (a *Authenticator) Changed() {
	if a != nil {
		a.generation.Add(1)
	}
}
