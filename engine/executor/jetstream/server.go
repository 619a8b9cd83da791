package jetstream

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedServer is a NATS server with JetStream in this process: what
// `ideaflow server` runs, and the tests' server.
type EmbeddedServer struct {
	ns *server.Server
}

// StartServer starts a server listening on listen (host:port; port 0 or
// -1: any free port) with JetStream storing under dataDir, and waits until
// it accepts connections. A token, when not "", is demanded of every client.
func StartServer(listen, dataDir, token string) (*EmbeddedServer, error) {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want host:port: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: port %q is not a number", listen, portText)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	ns, err := server.NewServer(&server.Options{
		Host: host, Port: port, JetStream: true, StoreDir: dataDir,
		NoSigs:        true, // the command handles signals and shuts down in order
		Authorization: token,
	})
	if err != nil {
		return nil, fmt.Errorf("nats server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("nats server on %s: not ready after 30 s", listen)
	}
	return &EmbeddedServer{ns: ns}, nil
}

// URL is the server's client URL, nats://host:port.
func (s *EmbeddedServer) URL() string { return s.ns.ClientURL() }

// Stop shuts the server down and waits until it has.
func (s *EmbeddedServer) Stop() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
