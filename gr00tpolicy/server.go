package gr00tpolicy

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"net"
	"sync"
	"time"

	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/membudget"
	"github.com/ndpack/ndpack/ndarray"
)

// Policy answers a GR00T server's get_action and reset requests, as GR00T's
// BasePolicy does.
type Policy interface {
	// GetAction answers an observation (and the client's options, nil for
	// None) with an action and an info map.
	GetAction(ctx context.Context, obs, options map[string]any) (action, info map[string]any, err error)
	// Reset starts a new episode; what it returns is the answer (nil is
	// None).
	Reset(ctx context.Context, options map[string]any) (map[string]any, error)
}

// Echo is a Policy that answers each observation with itself as the action
// and an empty info, and a reset with an empty map: for testing clients
// and measuring the wire.
var Echo Policy = echo{}

type echo struct{}

func (echo) GetAction(_ context.Context, obs, _ map[string]any) (map[string]any, map[string]any, error) {
	return obs, map[string]any{}, nil
}

func (echo) Reset(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{}, nil
}

// A Handler answers requests for an endpoint registered with Server.Handle:
// data is the request's "data" map (nil when the request has none). What
// it returns is the answer; an error is answered as {"error": its text}.
type Handler func(ctx context.Context, data map[string]any) (any, error)

// Server serves a Policy as GR00T's PolicyServer does, on a ZeroMQ REP
// socket that GR00T's PolicyClient (a REQ) connects to: the endpoints
// "ping", "kill", "get_action", "reset" and "get_modality_config", and
// those added with Handle. Requests are answered one at a time, as
// PolicyServer answers them, so that the Policy need not be safe for
// concurrent use; connections are read and written concurrently.
//
// Whatever a request does, its client gets an answer, so that its REQ
// socket's lockstep is never broken: a request that is not a map or does
// not decode, an unknown endpoint, a wrong token, a handler's error and
// a handler's panic are each answered with {"error": TEXT} (and a panic
// logged with its stack). Only a request over MaxSize, or one that breaks
// ZeroMQ's framing, closes its connection.
//
// Unlike PolicyServer, a Server bounds what its peers can take: each
// request's size (MaxSize), the memory of all requests being read and
// decoded and of the answers being written (MaxMemory), the connections
// (MaxConnections), and the time a connection may wait, trickle a request
// or leave its answer unread (IdleTimeout, ReadTimeout, WriteTimeout).
// For each limit, 0 means its default and a negative value none.
type Server struct {
	// Policy answers get_action and reset (Echo sends observations back).
	Policy Policy
	// Modality is what get_modality_config answers; nil answers {}.
	Modality map[string]ModalityConfig
	// Token, if not empty, must be each request's "api_token": a request
	// without it is answered {"error": "Unauthorized: Invalid API token"},
	// as PolicyServer answers.
	Token string
	// MaxSize bounds each request, in bytes; 0 means
	// ndarray.DefaultMaxSize (64 MiB). A larger request closes its
	// connection before it is read. A request whose Go values would take
	// more than 8 times its size (and 1 MiB) is answered with an error.
	MaxSize int64
	// MaxMemory bounds the memory all connections take at once for their
	// requests, as they are read and decoded, and the answers being
	// written; 0 means 4 times MaxSize (256 MiB by default). A request
	// that needs memory others hold waits up to 5 s for it, and is then
	// answered with an error saying so. The last 64th of the budget is
	// kept for pieces of at most a 256th, so that large requests cannot
	// keep a robot's small ones waiting.
	MaxMemory int64
	// MaxConnections caps the connections Serve serves at once; 0 means
	// 1024, or three quarters of the process's soft open-file limit if
	// that is less. At the cap, the connection that has waited for a
	// request the longest is closed to make room for the new one (a REQ
	// socket connects again by itself); only when none waits is the new
	// connection refused.
	MaxConnections int
	// IdleTimeout bounds how long a connection may wait for its next
	// request before it is closed; 0 means an hour.
	IdleTimeout time.Duration
	// ReadTimeout bounds how long a connection's greeting may take to
	// arrive, and a request from its first byte to its last; 0 means a
	// minute.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a client that has stopped reading
	// holds its connection: once it has taken less than 64 KiB of an
	// answer in WriteTimeout (and not all of it), the connection closes;
	// 0 means 20 s.
	WriteTimeout time.Duration
	// ErrorLog receives connection, handler and policy errors; nil means
	// the log package's standard logger.
	ErrorLog *log.Logger

	mu       sync.Mutex
	handlers map[string]Handler // added or replaced by Handle; nil: removed
	once     sync.Once
	mem      *membudget.Budget
	turn     sync.Mutex // held while a request is answered
}

// Handle registers h for the endpoint name, as PolicyServer's
// register_endpoint does, replacing a built-in of that name; a nil h
// removes the endpoint, so that s.Handle("kill", nil) keeps clients from
// stopping the server. It may be called while the server runs.
func (s *Server) Handle(name string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handlers == nil {
		s.handlers = map[string]Handler{}
	}
	s.handlers[name] = h
}

// removed reports whether Handle removed the endpoint name.
func (s *Server) removed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.handlers[name]
	return ok && h == nil
}

// handler returns the handler of an endpoint: one Handle registered, or a
// built-in; nil for none.
func (s *Server) handler(name string) Handler {
	s.mu.Lock()
	h, ok := s.handlers[name]
	s.mu.Unlock()
	if ok {
		return h // nil: removed
	}
	switch name {
	case "ping":
		return func(context.Context, map[string]any) (any, error) {
			return ordered{{"status", "ok"}, {"message", "Server is running"}}, nil
		}
	case "get_action":
		return s.getAction
	case "reset":
		return s.reset
	case "get_modality_config":
		return s.modalityConfig
	}
	return nil
}

func (s *Server) getAction(ctx context.Context, data map[string]any) (any, error) {
	obs, options, err := arguments("get_action", data, "observation")
	if err != nil {
		return nil, err
	}
	action, info, err := s.Policy.GetAction(ctx, obs, options)
	if err != nil {
		return nil, err
	}
	return []any{noneIfNil(action), noneIfNil(info)}, nil
}

func (s *Server) reset(ctx context.Context, data map[string]any) (any, error) {
	_, options, err := arguments("reset", data, "")
	if err != nil {
		return nil, err
	}
	info, err := s.Policy.Reset(ctx, options)
	if err != nil {
		return nil, err
	}
	return noneIfNil(info), nil
}

// arguments reads a built-in's keyword arguments from data: the map named
// by first ("" for none), required, and "options", a map or None; any
// other is refused, as Python refuses an unexpected keyword argument.
func arguments(endpoint string, data map[string]any, first string) (map[string]any, map[string]any, error) {
	var obs, options map[string]any
	for k, v := range data {
		switch {
		case k == first:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("%s: %s is %s, not a map", endpoint, first, kindOf(v))
			}
			obs = m
		case k == "options":
			m, ok := v.(map[string]any)
			if !ok && v != nil {
				return nil, nil, fmt.Errorf("%s: options is %s, not a map or None", endpoint, kindOf(v))
			}
			options = m
		default:
			return nil, nil, fmt.Errorf("%s() got an unexpected keyword argument '%s'", endpoint, k)
		}
	}
	if first != "" && obs == nil {
		return nil, nil, fmt.Errorf("%s() missing 1 required positional argument: '%s'", endpoint, first)
	}
	return obs, options, nil
}

func (s *Server) modalityConfig(context.Context, map[string]any) (any, error) {
	m := make(map[string]any, len(s.Modality))
	for name, mc := range s.Modality {
		m[name] = mc.wire()
	}
	return m, nil
}

func (s *Server) maxSize() int64 {
	if s.MaxSize > 0 {
		return s.MaxSize
	}
	return ndarray.DefaultMaxSize
}

// memoryPerMaxSize is MaxMemory's default, in MaxSizes.
const memoryPerMaxSize = 4

// budget returns the server's memory budget, made on first use.
func (s *Server) budget() *membudget.Budget {
	s.once.Do(func() {
		limit := s.MaxMemory
		if limit == 0 {
			limit = memoryPerMaxSize * min(s.maxSize(), math.MaxInt64/memoryPerMaxSize)
		}
		s.mem = &membudget.Budget{Limit: limit}
	})
	return s.mem
}

func (s *Server) limits() connset.Limits {
	return connset.Limits{MaxConns: s.MaxConnections, IdleTimeout: s.IdleTimeout,
		ReadTimeout: s.ReadTimeout, WriteTimeout: s.WriteTimeout}
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// Serve accepts connections on l and answers their requests until ctx
// ends, then closes l and every connection, waits for their handlers to
// return and returns nil. Once it has answered a kill request it stops
// so too, and returns ErrKilled. It returns the error of l's Accept that
// stopped it otherwise (running out of descriptors only pauses
// accepting). A Server without a Policy returns an error at once, having
// closed l.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if s.Policy == nil {
		l.Close()
		return errNoPolicy
	}
	set := connset.New(func(format string, args ...any) { s.logf("gr00tpolicy: "+format, args...) })
	killed := make(chan struct{})
	var killOnce sync.Once
	kill := func() { killOnce.Do(func() { close(killed) }) }
	errc := make(chan error, 1)
	go func() {
		errc <- set.Serve(l, s.limits(), func(nc net.Conn) {
			c := &serverConn{s: s, nc: nc.(*connset.Conn), mem: membudget.Lease{B: s.budget()}, kill: kill}
			c.run(set.Context())
		}, net.ErrClosed)
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	case <-killed:
	}
	set.Close()
	select {
	case <-killed:
		return ErrKilled
	default:
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("gr00tpolicy: serving %s: %w", l.Addr(), err)
	}
	if err == nil {
		<-errc
	}
	return nil
}

// errorAnswer is the answer to a request that failed: {"error": text}.
func errorAnswer(err error) ordered {
	return ordered{{"error", err.Error()}}
}

var errUnauthorized = errors.New("Unauthorized: Invalid API token")
