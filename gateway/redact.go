package gateway

import (
	"context"
	"log/slog"

	"github.com/cqlpg/cqlpg/sharding"
)

// Secrets never reach the log: passwords in URLs and in connection
// strings (a shard's), and in CQL text (CREATE ROLE ... PASSWORD 'x'), are
// masked in every record the gateway logs, whatever logged them.

// redactingHandler masks secrets in the messages and attribute values of
// the records it passes on.
type redactingHandler struct{ next slog.Handler }

// redacting wraps a logger's handler with redactingHandler, once.
func redacting(l *slog.Logger) *slog.Logger {
	if _, ok := l.Handler().(redactingHandler); ok {
		return l
	}
	return slog.New(redactingHandler{l.Handler()})
}

func (h redactingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, sharding.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = redactAttr(a)
	}
	return redactingHandler{h.next.WithAttrs(red)}
}

func (h redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{h.next.WithGroup(name)}
}

// redactAttr masks the secrets of an attribute's value: strings, errors
// and whatever else formats as text; numbers, times and the like pass
// unchanged.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, sharding.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = redactAttr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		return slog.String(a.Key, sharding.Redact(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
