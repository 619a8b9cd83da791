//go:build !unix

package cache

import "errors"

// Reads beside a run are served on unix sockets only (serve.go); elsewhere
// a read-only open beside a run fails with ErrLocked, as it always did.

var errNoServe = errors.New("reading a cache a run holds needs unix sockets")

// ErrServeGone: see serve.go.
var ErrServeGone = errors.New("the run serving the cache stopped while it was read")

// SocketName is the socket's name in the cache folder.
const SocketName = "serve.sock"

// SocketPath: see serve.go.
func SocketPath(dir string) string { return dir + "/" + SocketName }

// Server: see serve.go.
type Server struct{}

// Serve: see serve.go.
func (b *Badger) Serve() (*Server, error) { return nil, errNoServe }

// Path: see serve.go.
func (s *Server) Path() string { return "" }

// Close: see serve.go.
func (s *Server) Close() error { return nil }

// Served: see serve.go.
type Served struct{ store }

// DialServed: see serve.go.
func DialServed(dir string) (*Served, error) { return nil, errNoServe }

// Dir: see serve.go.
func (s *Served) Dir() string { return "" }

// Socket: see serve.go.
func (s *Served) Socket() string { return "" }

// Recovery: see serve.go.
func (s *Served) Recovery() Recovery { return Recovery{} }
